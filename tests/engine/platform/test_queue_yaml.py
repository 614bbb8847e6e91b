"""A queue configuration written as YAML (config_yaml) reads back to the same configuration: walltimes
in whole days, hours or minutes, names YAML would read as something else quoted."""

from __future__ import annotations

import pytest

from engine.api import SHIPPED_QUEUE_CONFIGS, config_yaml, walltime_yaml, parse_queue_config, shipped_queue_text


@pytest.mark.parametrize(("seconds", "text"), [(86400, "1d"), (7 * 86400, "7d"), (43200, "12h"), (90000, "25h"),
                                                (5400, "90m"), (61, "61s"), (1, "1s")])
def test_walltimes_are_written_exactly_in_the_largest_whole_unit(seconds, text):
    assert walltime_yaml(seconds) == text
    assert parse_queue_config(f"queues:\n  - {{name: q, walltime: {text}}}\n").queues[0].walltime == seconds


@pytest.mark.parametrize("name", list(SHIPPED_QUEUE_CONFIGS))
def test_the_shipped_configurations_read_back_the_same(name):
    config = parse_queue_config(shipped_queue_text(name))
    again = parse_queue_config(config_yaml(config))
    assert (again.queues, again.mode) == (config.queues, config.mode)


def test_every_key_and_awkward_names_read_back_the_same():
    text = """mode: virtual
queues:
  - {name: "yes", walltime: 2h, priority: -3, max_cores: 100, max_share: 0.25, user_max_jobs: 4,
     user_max_cores: 8, pool: ["a b", "null"], single_node: true}
  - {name: "2024", walltime: 1d}
  - {name: "it's", walltime: 30m}
"""
    config = parse_queue_config(text)
    written = config_yaml(config)
    assert parse_queue_config(written).queues == config.queues
    assert "  - name: 'yes'\n" in written and "    pool: ['a b', 'null']\n" in written
    assert "  - name: 'it''s'\n" in written and "    walltime: 30m\n" in written
    assert "priority: 0" not in written     # defaults are left out
