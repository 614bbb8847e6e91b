"""Queue configurations: the shipped MetaCentrum setups, missing queues, line-level errors."""

from __future__ import annotations

import numpy as np
import pytest

from engine.platform.queues import assign_queues, load_queue_config, parse_queue_config
from engine.workload import WorkloadError


def test_historical_setup_from_the_paper():
    config = load_queue_config("metacentrum-historical")
    queues = {q.name: q for q in config.queues}
    assert config.mode == "priority"
    assert [(q.walltime, q.priority, q.user_max_jobs) for q in (queues["long"], queues["normal"], queues["short"])] \
        == [(30 * 86400, 70, 70), (86400, 50, 300), (7200, 60, 250)]
    backfill = queues["backfill"]
    assert (backfill.single_node, backfill.walltime, backfill.priority, backfill.user_max_jobs) == (True, 86400, 20, 1000)
    # long's pool: 1440 of ~6,100 cores -> 0.236 of any machine; on 6,100 cores floor(1439.6) = 1439
    assert queues["long"].core_limit(6100) == 1439


def test_2014_setup_is_virtual_with_pools_shrinking_as_walltime_grows():
    config = load_queue_config("metacentrum-2014")
    assert config.mode == "virtual"
    names = ["q_2h", "q_4h", "q_1d", "q_2d", "q_4d", "q_1w", "q_2w", "q_2w_plus"]
    queues = [config.queues[config.index(name)] for name in names]
    walltimes = [q.walltime for q in queues]
    limits = [q.core_limit(10_000) for q in queues]
    assert walltimes == sorted(walltimes) and walltimes[-1] == 30 * 86400
    assert limits == sorted(limits, reverse=True) and limits[-1] < limits[0]


def test_missing_queue_goes_to_the_smallest_queue_whose_walltime_fits():
    config = parse_queue_config("""mode: virtual
queues:
  - {name: short, walltime: 2h}
  - {name: day, walltime: 1d}
  - {name: single, walltime: 30d, single_node: true}
  - {name: month, walltime: 30d}
""")
    names = np.array(["short", "weird", "weird", "weird", "single", "weird"])
    requested = np.array([60, 3600, 7201, 40 * 86400, 100, 10 * 86400])
    nodes = np.array([1, 1, 1, 2, 2, 1])
    assignment = assign_queues(config, names, requested, nodes)
    #  short stays; 1 h -> short; 2 h + 1 s -> day; 40 d on 2 nodes fits none -> the longest queue
    #  that takes multi-node jobs (month); a 2-node job in "single" -> short; 10 d on 1 node -> single
    assert [config.queues[q].name for q in assignment.queue] == ["short", "short", "day", "month", "short", "single"]
    assert assignment.moved == {"single -> short": 1, "weird -> day": 1, "weird -> month": 1,
                                "weird -> short": 1, "weird -> single": 1}
    assert assignment.over_walltime == 1


@pytest.mark.parametrize("text, line, field", [
    ("mode: sideways\nqueues: []\n", 1, "mode"),
    ("mode: virtual\nqueues:\n  - name: a\n    walltime: soon\n", 4, "walltime"),
    ("queues:\n  - name: a\n    walltime: 2h\n    max_share: 1.5\n", 4, "max_share"),
    ("queues:\n  - name: a\n    walltime: 2h\n  - name: b\n    walltime: 1h\n    user_max_jobs: -3\n", 6, "user_max_jobs"),
    ("queues:\n  - name: a\n    walltime: 2h\n    prority: 3\n", 4, "prority"),
    ("queues:\n  - name: a\n    walltime: 2h\n   bad indent: 1\n", 4, None),
    # found by fuzzing: OverflowError, ValueError, a two-line message, an unsortable key
    pytest.param("queues:\n  - name: a\n    walltime: " + "9" * 400 + "\n", 3, "walltime", id="400-digit walltime"),
    ("queues:\n  - name: a\n    walltime: 1e400\n", 3, "walltime"),
    pytest.param("queues:\n  - name: a\n    walltime: 2h\n    max_cores: " + "9" * 5000 + "\n", 4, None,
                 id="5000-digit integer"),
    ("queues:\n  - name: a\n    walltime: 2h\n    user_max_jobs: 99999999999999999999\n", 4, "user_max_jobs"),
    ("queues:\n  - name: a\n    walltime: 2h\n\x0b  - name: b\n", 4, None),
    ("queues:\n  - name: a\n    walltime: 2h\n    0: 1\n", 4, "0"),
])
def test_bad_configurations_name_the_line_and_field(text, line, field):
    with pytest.raises(WorkloadError) as error:
        parse_queue_config(text, source="q.yaml")
    assert error.value.line == line and error.value.field == field
    assert str(error.value).startswith(f"q.yaml, line {line}:") and "\n" not in str(error.value)


def test_unknown_name_or_path_is_explained():
    with pytest.raises(WorkloadError, match="metacentrum-2014"):
        load_queue_config("metacentrum-2015")


def assign_queues_job_by_job(config, queue_names, requested, nodes):
    """The per-job loop assign_queues replaced, kept as its reference."""
    index = {q.name: i for i, q in enumerate(config.queues)}
    by_walltime = sorted(range(len(config.queues)), key=lambda i: (config.queues[i].walltime, i))
    result, moved = [], {}
    for job in range(len(requested)):
        name, single = str(queue_names[job]), int(nodes[job]) <= 1
        chosen = index.get(name)
        if chosen is not None and (single or not config.queues[chosen].single_node):
            result.append(chosen)
            continue
        eligible = [i for i in by_walltime if single or not config.queues[i].single_node] or by_walltime
        longest = max(eligible, key=lambda i: (config.queues[i].walltime, -i))
        result.append(next((i for i in eligible if config.queues[i].walltime >= int(requested[job])), longest))
        label = f"{name} -> {config.queues[result[-1]].name}"
        moved[label] = moved.get(label, 0) + 1
    walltimes = [q.walltime for q in config.queues]
    over = sum(int(requested[job]) > walltimes[q] for job, q in enumerate(result))
    return result, dict(sorted(moved.items())), over


SINGLE_NODE = """mode: virtual
queues:
  - {name: short, walltime: 2h}
  - {name: one, walltime: 1d, single_node: true}
  - {name: day, walltime: 1d}
  - {name: single, walltime: 30d, single_node: true}
"""


@pytest.mark.parametrize("seed", range(20))
def test_assignment_equals_the_job_by_job_loop(seed):
    rng = np.random.default_rng(seed)
    config = load_queue_config("metacentrum-2014") if seed % 2 else parse_queue_config(SINGLE_NODE)
    known = [q.name for q in config.queues]
    n = int(rng.integers(0, 400))
    names = rng.choice(known + ["weird", "q_x", ""], size=n)
    requested = rng.choice([0, 60, 3600, 7200, 86400, 2 * 86400, 10 ** 7, *rng.integers(0, 40 * 86400, 5)], size=n)
    nodes = rng.choice([0, 1, 2, 8], size=n)
    got = assign_queues(config, names, requested, nodes)
    assert (got.queue.tolist(), got.moved, got.over_walltime) == assign_queues_job_by_job(config, names, requested,
                                                                                          nodes)
