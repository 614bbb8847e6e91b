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
                    "minimum": 0, "choices": None, "allow_infinity": True,
                    "label": "maximum skipping count (MASC)", "unit": "later arrivals", "workload": False}


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
    ({"algorithm": "conservative", "ordering": "fcfs", "backfill_bound": 3}, "unknown key 'backfill_bound'"),
])
def test_bad_specs_say_what_is_wrong(spec, message):
    with pytest.raises(PolicyError, match=message):
        resolve(spec)


def test_labels_show_changed_parameters():
    assert resolve("sorted-masc").label == "sorted-masc"
    assert resolve({"preset": "sorted-masc", "params": {"masc": 5}}).label == "sorted-masc (masc=5)"


def test_every_preset_names_a_known_family_and_paper():
    from engine.policies.registry import FAMILIES, PAPERS, catalog

    for preset in catalog():
        assert preset["family"] in FAMILIES, preset["name"]
        assert preset["paper"] == "" or preset["paper"] in PAPERS, preset["name"]
        assert preset["family_title"] == FAMILIES[preset["family"]]


def test_every_family_has_a_preset_and_every_paper_its_text():
    from engine.policies.registry import FAMILIES, PAPERS, catalog
    from tests.shared_data import SHARED_DATA

    # (the plugins family has presets where Python plugins are loaded: tests/engine/policies/test_plugins.py)
    assert {p["family"] for p in catalog()} - {"plugins"} == set(FAMILIES) - {"plugins"}
    assert {p["paper"] for p in catalog()} - {""} == set(PAPERS)
    for paper in PAPERS.values():
        assert (SHARED_DATA.parent / "papers" / paper.file).is_file(), paper.file


def test_parameters_carry_a_label_in_words_and_workload_options_are_marked():
    from engine.policies.registry import WORKLOAD_OPTIONS, catalog

    params = {q["name"]: q for p in catalog() for q in p["params"]}
    assert params["fairshare_halflife"]["label"] == "fair-share half-life" and params["fairshare_halflife"]["unit"] == "h"
    assert params["t0"]["label"] == "initial temperature T0"
    assert {name for name, q in params.items() if q["workload"]} == set(WORKLOAD_OPTIONS)
    assert all(q["label"] and "_" not in q["label"] for q in params.values())
