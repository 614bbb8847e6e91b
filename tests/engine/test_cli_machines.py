"""The command line with a machine description and a queue configuration (MetaCentrum)."""

from __future__ import annotations

import json

import pandas as pd

from engine.cli import main
from tests.shared_data import SHARED_DATA

DATA = str(SHARED_DATA / "metacentrum/alea")


def test_simulate_a_metacentrum_trace_on_its_clusters_with_2014_queues(tmp_path, capsys):
    out, summary = tmp_path / "s.csv", tmp_path / "s.json"
    status = main(["simulate", f"{DATA}/wagap-2013.swf", "--machines", f"{DATA}/wagap-2013.swf.machines",
                   "--queues", "metacentrum-2014", "--policy", "mrfs-easy", "--days", "0:3",
                   "--out", str(out), "--summary", str(summary)])
    assert status == 0
    schedule = pd.read_csv(out)
    assert {"queue", "cluster", "nodes"} <= set(schedule.columns)
    assert set(schedule["cluster"]) <= {"zewura", "zegox"}
    first = schedule.iloc[0]
    assert all(node.startswith(first["cluster"] + "-") for node in first["nodes"].split(";"))
    figures = json.loads(summary.read_text())
    assert set(figures["per_queue"]) <= {"q_2h", "q_4h", "q_1d", "q_2d", "q_4d", "q_1w", "q_2w", "q_2w_plus", "backfill"}
    assert sum(q["jobs"] for q in figures["per_queue"].values()) == figures["jobs"]
    assert figures["queues"]["mode"] == "virtual"


def test_queues_without_machines_is_one_line_error(tmp_path, capsys):
    status = main(["simulate", f"{DATA}/wagap-2013.swf", "--queues", "metacentrum-2014", "--policy", "mrfs-easy",
                   "--out", str(tmp_path / "s.csv")])
    assert status == 2
    assert "--machines" in capsys.readouterr().err


def test_inspect_describes_the_requests(capsys):
    assert main(["inspect", f"{DATA}/wagap-2013.swf", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["requests"]["format"] == "metacentrum" and info["requests"]["exclusive_jobs"] == 231
