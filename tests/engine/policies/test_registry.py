"""The registry: one catalog for the command line and the web form; specs validated."""

from __future__ import annotations

import json
import math

import pytest

from engine.policies import PolicyError
from engine.policies.registry import catalog, resolve


def test_catalog_is_json_and_names_every_parameter():
    entries = json.loads(json.dumps(catalog()))
    masc = next(e for e in entries if e["name"] == "sorted")["params"][0]
    assert masc == {"name": "masc", "type": "int", "default": "inf", "description": masc["description"],
                    "minimum": 0, "choices": None, "allow_infinity": True}


@pytest.mark.parametrize("spec", ["easy", '{"preset": "easy"}', {"preset": "easy", "params": {}},
                                  {"ordering": "fcfs", "algorithm": "easy"}])
def test_a_policy_can_be_named_many_ways(spec):
    resolved = resolve(spec)
    assert (resolved.ordering, resolved.algorithm) == ("fcfs", "easy")


@pytest.mark.parametrize("value", ["inf", None, "∞"])
def test_infinity_is_spelled_inf(value):
    assert math.isinf(resolve({"preset": "sorted-masc", "params": {"masc": value}}).params["masc"])


def test_a_spec_round_trips_through_json():
    spec = resolve({"preset": "sorted", "params": {"masc": "inf"}})
    assert resolve(json.loads(json.dumps(spec.to_dict()))) == spec


@pytest.mark.parametrize(("spec", "message"), [
    ("fifo", "unknown policy 'fifo'"),
    ({"preset": "sorted", "params": {"masc": -1}}, "at least 0"),
    ({"preset": "sorted", "params": {"masc": 2.5}}, "expected an integer"),
    ({"ordering": "random", "algorithm": "easy"}, "unknown ordering"),
    ({"preset": "easy", "params": {"masc": 3}}, "unknown parameter 'masc'"),
])
def test_bad_specs_say_what_is_wrong(spec, message):
    with pytest.raises(PolicyError, match=message):
        resolve(spec)


def test_labels_show_changed_parameters():
    assert resolve("sorted-masc").label == "sorted-masc"
    assert resolve({"preset": "sorted-masc", "params": {"masc": 5}}).label == "sorted-masc (masc=5)"
