"""The MetaCentrum block reader (numbers of many lines checked and converted at once) and the
per-spec node columns give exactly what the line-by-line reader and the per-row loop gave."""

from __future__ import annotations

import math
import random

import numpy as np
import pandas as pd
import pytest

from engine.workload import metacentrum
from engine.workload.errors import WorkloadError
from engine.workload.metacentrum import (
    KEPT_EXCLUDED_HOST,
    REPAIR_CHUNKS,
    REPAIR_FRACTION,
    REPAIR_NO_NODES,
    REPAIR_NO_PPN,
    parse_nodespec,
    read_extended,
)
from engine.workload.model import CleaningReport
from tests.engine.fuzz import METACENTRUM, metacentrum_corpus, mutants

WAGAP = METACENTRUM / "alea" / "wagap-2013.swf"


def read_both(path, **options):
    """(block reader's result or error, careful reader's result or error)."""
    outcomes = []
    for careful in (False, True):
        try:
            outcomes.append(read_extended(path, careful=careful, **options))
        except WorkloadError as error:
            outcomes.append(str(error))
    return outcomes


def assert_same(fast, careful):
    if isinstance(careful, str):
        assert fast == careful
        return
    pd.testing.assert_frame_equal(fast.swf.jobs, careful.swf.jobs)
    pd.testing.assert_frame_equal(fast.nodes, careful.nodes)
    assert fast.swf.metadata == careful.swf.metadata
    assert fast.report == careful.report


def test_wagap_reads_the_same_both_ways(monkeypatch):
    block_reads = []
    original = metacentrum._plain_block
    monkeypatch.setattr(metacentrum, "_plain_block", lambda *a: block_reads.append(1) or original(*a))
    fast, careful = read_both(WAGAP)
    assert block_reads, "the block reader did not run"
    assert len(fast.swf.jobs) == 17_900
    assert_same(fast, careful)


def test_blocks_join_across_their_boundary(tmp_path, monkeypatch):
    monkeypatch.setattr(metacentrum, "_PLAIN_BLOCK", 7)       # 10 jobs: a block of 7, then 3
    path = tmp_path / "ten.swf"
    path.write_bytes(metacentrum_corpus()["wagap-2013.swf"])
    fast, careful = read_both(path)
    assert len(fast.swf.jobs) == 10
    assert_same(fast, careful)


@pytest.mark.parametrize("line, why", [
    ("1 1356996695 71 1164297 12 1 1024 12 1209600 1e3 1 101 1 1 -1 1 1 1 {1129} q_2w 1:ppn=12", "exponent"),
    ("1 1356996695 71 1164297 12 1 1024 12 1209600 x 1 101 1 1 -1 1 1 1 {1129} q_2w 1:ppn=12", "a name"),
    ("1 1356996695 71 1164297 12 1 1024 12 1209600 1 1 101 1 1 -1 1 1 1 1129 q_2w 1:ppn=12", "hosts"),
    ("1 1356996695 71 1164297 12 1 1024 12 1209600 1 1 101 1 1 -1 1 1 1 {1129} q_2w ppn=x", "nodespec"),
    ("1 1356996695 71 1164297 12 1 1024 12 1209600 1 1 101 1 1 -1 1 1 {1129} q_2w 1:ppn=12", "20 fields"),
    ("1 1356996695 71 1164297 12 1 1024 12 1209600 99999999999999999999 1 101 1 1 -1 1 1 1 {1129} q_2w 1:ppn=12",
     "too large"),
])
def test_a_line_that_is_not_plain_goes_to_the_careful_reader(tmp_path, line, why):
    good = metacentrum_corpus()["wagap-2013.swf"]
    path = tmp_path / "one-odd-line.swf"
    path.write_bytes(good + line.encode() + b"\n")
    fast, careful = read_both(path)
    assert_same(fast, careful)
    fast, careful = read_both(path, skip_bad_lines=True)
    assert_same(fast, careful)


def test_mutated_traces_read_the_same_both_ways(tmp_path):
    for case in mutants(metacentrum_corpus(), "metacentrum-blocks", range(300), gzip_too=True):
        path = tmp_path / case.name.replace("#", "_")
        path.write_bytes(case.data)
        for skip in (False, True):
            try:
                fast, careful = read_both(path, skip_bad_lines=skip, trace_format="metacentrum")
            except Exception as error:      # pragma: no cover - the message names the case
                raise AssertionError(f"{case.name} ({case.what}): {error!r}") from error
            assert_same(fast, careful)


# the per-row loop the per-spec columns replaced, kept as their reference
def node_columns_row_by_row(rows, procs, fmt):
    out = {name: [] for name in ("nodes", "ppn", "spec_mem", "gpus", "exclusive", "queue_name", "clusters",
                                 "exclude", "hosts", "properties", "nodespec", "exec_hosts")}
    counts = dict.fromkeys((REPAIR_CHUNKS, REPAIR_NO_PPN, REPAIR_NO_NODES, REPAIR_FRACTION, KEPT_EXCLUDED_HOST), 0)
    for i, (queue, spec, raw, ran_on) in enumerate(rows):
        p = max(int(procs[i]), 1)
        counts[REPAIR_CHUNKS] += spec.chunks > 1
        counts[REPAIR_FRACTION] += spec.fractional_ppn
        counts[KEPT_EXCLUDED_HOST] += bool(spec.excluded_hosts)
        if spec.nodes is None and spec.ppn is None and fmt == "aleang":
            count, per = p, 1
        elif spec.nodes is None:
            counts[REPAIR_NO_NODES] += 1
            count, per = 1, spec.ppn or p
        elif spec.ppn is None:
            counts[REPAIR_NO_PPN] += 1
            count, per = spec.nodes, max(math.ceil(p / spec.nodes), 1)
        else:
            count, per = spec.nodes, spec.ppn
        for name, value in (("nodes", count), ("ppn", per), ("spec_mem", spec.mem_kb), ("gpus", spec.gpus),
                            ("exclusive", spec.exclusive), ("queue_name", queue),
                            ("clusters", ";".join(spec.clusters)), ("exclude", ";".join(spec.exclude)),
                            ("hosts", ";".join(spec.hosts)), ("properties", ";".join(spec.properties)),
                            ("nodespec", raw), ("exec_hosts", ran_on)):
            out[name].append(value)
    frame = pd.DataFrame(out).astype({"nodes": np.int64, "ppn": np.int64, "spec_mem": np.int64, "gpus": np.int64,
                                      "exclusive": bool})
    return frame, counts


SPECS = ["1:ppn=12", "2:ppn=4:cl_zewura", "ppn=8", "3", "2:ppn=2+1:ppn=6", "1:ppn=1.5:^cl_x", "host=a.b.cz:ppn=2",
         "1:ppn=2:mem=3gb#excl", "4:gpu=2:infiniband", "^node1.x.cz:ppn=3", "nodecpus80", "1:ppn=3:x86_64:brno"]


@pytest.mark.parametrize("fmt", ["metacentrum", "aleang"])
def test_node_columns_per_spec_equal_the_row_by_row_loop(fmt):
    rng = random.Random(fmt)
    specs = {text: parse_nodespec(text) for text in SPECS}
    specs["aleang bare"] = metacentrum.NodeSpec(properties=("p",), gpus=1)
    rows, procs = [], []
    for i in range(2_000):
        text = rng.choice(sorted(specs))
        rows.append((f"q{rng.randrange(3)}", specs[text], text, f"h{i % 7}"))
        procs.append(rng.choice((0, 1, 5, 12, 13, 64)))
    report = CleaningReport()
    got = metacentrum._node_columns(rows, np.array(procs, dtype=np.int64), fmt, "KB", "node", report)
    expected, counts = node_columns_row_by_row(rows, procs, fmt)
    pd.testing.assert_frame_equal(got, expected)
    for reason, count in counts.items():
        kind = report.kept if reason == KEPT_EXCLUDED_HOST else report.repaired
        assert kind.get(reason, 0) == count
    assert counts[REPAIR_NO_NODES] and counts[REPAIR_NO_PPN] and counts[REPAIR_CHUNKS]
