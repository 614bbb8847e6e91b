"""The command line with a machine description and a queue configuration (MetaCentrum)."""

from __future__ import annotations

import json

import pandas as pd
import pytest

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


ALEANG = SHARED_DATA / "metacentrum/aleang"
OPENPBS = SHARED_DATA / "metacentrum/fairsharesim/OpenPBS.log"


def test_a_journal_trace_takes_its_machine_size_from_its_machines_file(tmp_path):
    """AleaNG's journal traces have no MaxProcs: --machines gives the size (it was refused, 'give --procs')."""
    summary = tmp_path / "s.json"
    assert main(["simulate", str(ALEANG / "NGI_CZ_journal_PBSeasy.swf"), "--machines",
                 str(ALEANG / "NGI_CZ_journal_PBSeasy.swf.machines"), "--policy", "fcfs", "--out",
                 str(tmp_path / "s.csv"), "--summary", str(summary)]) == 0
    figures = json.loads(summary.read_text())
    assert figures["capacity"] == 4 and figures["jobs"] + figures["rejected_total"] == 201


def inferred_openpbs(tmp_path, change: tuple[str, str]) -> tuple[str, str]:
    """The OpenPBS log's inferred machine and queues (``engine infer``), one line of the queues changed."""
    machines, queues = tmp_path / "m.yaml", tmp_path / "q.yaml"
    assert main(["infer", str(OPENPBS), "--queues-out", str(queues), "--machines-out", str(machines)]) == 0
    text = queues.read_text()
    assert change[0] in text
    queues.write_text(text.replace(change[0], change[1]))
    return str(machines), str(queues)


def test_openpbs_workq_at_one_hour_rejects_all_200_jobs_at_submission(tmp_path):
    """Issue 23: every job of the log asks for 2 h; with workq at 1 h they are refused at submission
    (the run used to give the same mean wait as with 2 h and 0 rejected)."""
    machines, queues = inferred_openpbs(tmp_path, ("walltime: 2h ", "walltime: 1h "))
    summary, rejected = tmp_path / "s.json", tmp_path / "r.csv"
    assert main(["simulate", str(OPENPBS), "--machines", machines, "--queues", queues, "--policy", "mrfs-easy",
                 "--out", str(tmp_path / "s.csv"), "--summary", str(summary), "--rejected-out", str(rejected)]) == 0
    figures = json.loads(summary.read_text())
    assert figures["jobs"] == 0 and figures["admission"]["rejected_total"] == 200
    assert figures["admission"]["lines"] == ["200 jobs of 2 users ask for more than workq's 1 h: rejected at submission"]
    listed = pd.read_csv(rejected)
    assert len(listed) == 200 and listed["native_id"].iloc[0] == "112461.torque1.grid.cesnet.cz"
    assert set(listed["limit"]) == {"walltime 1 h"} and set(listed["user_name"]) == {"vchlum", "klusacek"}


def test_openpbs_user_max_cores_two_never_fails_the_run(tmp_path):
    """Issue 23: user_max_cores 2 on a queue inferred with 4 failed the run ("45 jobs still wait with
    the machine idle at t=1734935651"); the 45 jobs of 4 cores are refused at submission instead."""
    machines, queues = inferred_openpbs(tmp_path, ("user_max_cores: 4 ", "user_max_cores: 2 "))
    summary, out = tmp_path / "s.json", tmp_path / "s.csv"
    assert main(["simulate", str(OPENPBS), "--machines", machines, "--queues", queues, "--policy", "mrfs-easy",
                 "--out", str(out), "--summary", str(summary)]) == 0
    figures = json.loads(summary.read_text())
    schedule = pd.read_csv(out)
    four_cores = int((pd.read_csv(out)["procs"] > 2).sum())
    assert four_cores == 0 and figures["jobs"] == len(schedule) == 200 - figures["admission"]["rejected_total"]
    assert figures["admission"]["per_queue"]["workq"]["rejected"] == 45
    assert (schedule["native_id"].str.endswith(".torque1.grid.cesnet.cz")).all()
    held = schedule[[c for c in schedule if c.startswith("held_") and c != "held_by"]].sum(axis=1)
    assert (held == schedule["wait"]).all() and figures["pending"]["hours"]["queue_limit"] > 0


@pytest.mark.slow
def test_wagap_q_1d_at_12_hours_rejects_its_longer_jobs_counted_per_queue_and_user(tmp_path):
    """Issue 23: q_1d at 12 h instead of 1 d. Every job the 2014 setup puts in q_1d asking more than
    12 h is rejected at submission, counted per queue and per user (the preview showed 0 changes)."""
    from engine.api import read_queue_config, read_trace, shipped_queue_text
    text = shipped_queue_text("metacentrum-2014").replace("  - name: q_1d\n    walltime: 24h",
                                                          "  - name: q_1d\n    walltime: 12h")
    (tmp_path / "q.yaml").write_text(text)
    summary = tmp_path / "s.json"
    assert main(["simulate", f"{DATA}/wagap-2013.swf", "--machines", f"{DATA}/wagap-2013.swf.machines",
                 "--queues", str(tmp_path / "q.yaml"), "--policy", "mrfs-easy", "--out", str(tmp_path / "s.csv"),
                 "--summary", str(summary)]) == 0
    figures = json.loads(summary.read_text())
    # by hand: the trace's q_1d jobs asking for more than 12 h (the setup's missing queues, ops and
    # priority_long, send a job to the shortest queue long enough for it: never q_1d beyond 12 h)
    jobs = read_trace(f"{DATA}/wagap-2013.swf").jobs
    assert read_queue_config(str(tmp_path / "q.yaml")).index("ops") is None
    over = jobs[(jobs["queue_name"] == "q_1d") & (jobs["requested_time"] > 12 * 3600)]
    group = next(g for g in figures["admission"]["groups"] if g["queue"] == "q_1d")
    assert (group["reason"], group["outcome"], group["jobs"], group["users"]) == \
        ("walltime", "rejected", len(over), over["user"].nunique())
    assert group["line"] == f"{len(over):,} jobs of {over['user'].nunique()} users ask for more than q_1d's 12 h: " \
                            "rejected at submission"
    assert figures["admission"]["per_queue"]["q_1d"] == {"rejected": len(over), "routed": 0}
    per_user = figures["admission"]["per_user"]
    assert sum(u["rejected"] for u in per_user.values()) == figures["admission"]["rejected_total"]
    assert not (pd.read_csv(tmp_path / "s.csv").query("queue == 'q_1d'")["requested_time"] > 12 * 3600).any()
