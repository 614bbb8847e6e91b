"""The current configuration inferred from a trace's recorded schedule, on hand-made traces.

Each trace below is small enough to work out by hand what the recording shows: which queues,
their largest requests, the most cores and jobs held at once (overall and by one user), and the
clusters the jobs ran on.
"""

from __future__ import annotations

import pytest

from engine.cli import main
from engine.platform.infer import infer, peak, round_walltime
from engine.platform.machines import parse_machines
from engine.platform.queues import parse_queue_config
from engine.workload import load_workload
from engine.workload.metacentrum import exec_hosts_text

T0 = 1_360_836_000          # 2013-02-14 10:00 UTC


def line(job: int, submit: int, wait: int, runtime: int, cores: int, walltime: int, user: int, hosts: list[str],
         queue: str, spec: str) -> str:
    """One job of the extended MetaCentrum SWF (21 fields)."""
    return (f"{job} {T0 + submit} {wait} {runtime} {cores} 1 1024 {cores} {walltime} -1 1 {user} 1 1 -1 1 1 1 "
            f"{{{','.join(hosts)}}} {queue} {spec}")


# Two queues. q_2h: jobs 0-2 overlap from t=100 to t=200 (4 + 2 + 1 = 7 cores; user 5 holds 6
# cores in 2 jobs); job 3 starts at t=200 exactly when jobs 0 and 1 end, beside job 2 (until
# t=600): 1 + 8 = 9 cores, all user 6's (ends come before starts, so 4 + 2 + 1 + 8 is never
# counted). q_1d: one job of user 7 with a 20 h request, on a zegox host.
TRACE = [
    line(0, 0, 100, 100, 4, 3600, 5, ["zewura1"] * 4, "q_2h", "1:ppn=4"),
    line(1, 50, 50, 100, 2, 7000, 5, ["zewura1"] * 2, "q_2h", "1:ppn=2"),
    line(2, 60, 40, 500, 1, 600, 6, ["zewura2"], "q_2h", "1:ppn=1"),
    line(3, 150, 50, 100, 8, 7200, 6, ["zewura2"] * 8, "q_2h", "1:ppn=8"),
    line(4, 0, 0, 1000, 12, 72000, 7, ["zegox3"] * 12, "q_1d", "1:ppn=12"),
]
MACHINE = "0\tzewura\t2\t80\t1\t529426432\n1\tzegox\t4\t12\t1\t94035968\n"


@pytest.fixture
def trace(tmp_path):
    path = tmp_path / "hand.swf"
    path.write_text("\n".join(TRACE) + "\n")
    return path


def by_name(found):
    return {q.name: q for q in found.queues}


def test_walltime_is_the_largest_request_rounded_up_to_a_usual_value(trace):
    queues = by_name(infer(load_workload(trace)))
    assert queues["q_2h"].walltime.value == "2h"          # largest request 7,200 s
    assert queues["q_1d"].walltime.value == "1d"          # 72,000 s = 20 h -> 1 d
    assert "02:00:00" in queues["q_2h"].walltime.why and "4 jobs" in queues["q_2h"].walltime.why


def test_most_cores_and_per_user_figures_held_at_once(trace):
    q = by_name(infer(load_workload(trace)))["q_2h"]
    assert q.max_cores.value == 9           # jobs 2 and 3 from t=200 beat 4 + 2 + 1 = 7 at t=100
    assert q.max_cores.why == "9 cores running at once on 2013-02-14 10:03"
    assert q.user_max_jobs.value == 2       # user 5: jobs 0 and 1 from t=100; user 6: 2 and 3 from t=200
    assert q.user_max_cores.value == 9      # user 6: jobs 2 (1 core) and 3 (8 cores) at t=200
    assert q.user_max_cores.why.startswith("user 6 held 9 cores at once")


def test_pools_are_the_clusters_the_jobs_ran_on(trace):
    queues = by_name(infer(load_workload(trace)))
    assert queues["q_2h"].pool.value == ["zewura"]
    assert queues["q_1d"].pool.value == ["zegox"]
    assert queues["q_1d"].pool.why == "its jobs ran on zegox (1 job)"


def test_yaml_is_a_queue_configuration_with_evidence_in_comments(trace):
    found = infer(load_workload(trace))
    text = found.queues_yaml()
    config = parse_queue_config(text)
    assert config.mode == "virtual"
    q2h = config.queues[config.index("q_2h")]
    assert (q2h.walltime, q2h.max_cores, q2h.user_max_jobs, q2h.user_max_cores, q2h.pool) == \
        (7200, 9, 2, 9, ("zewura",))
    assert "max_cores: 9" in text and "# 9 cores running at once on 2013-02-14 10:03" in text
    assert "5 jobs with a recorded" in text


def test_a_machine_is_inferred_from_the_hosts(trace):
    machine = infer(load_workload(trace)).machine
    clusters = {c.name: (c.nodes, c.cores) for c in machine.clusters}
    # zewura1 held 4 + 2 at once, zewura2 held 1 + 8 at once: 2 nodes of 9 cores seen
    assert clusters == {"zewura": (2, 9), "zegox": (1, 12)}


def test_the_inferred_machine_text_reads_back(trace):
    found = infer(load_workload(trace))
    again = parse_machines(found.machine_yaml())
    assert sorted((c.name, c.nodes, c.cores) for c in again.clusters) == [("zegox", 1, 12), ("zewura", 2, 9)]


def test_numeric_hosts_take_the_cluster_their_jobs_asked_for(tmp_path):
    path = tmp_path / "ids.swf"
    path.write_text("\n".join([
        line(0, 0, 0, 100, 8, 3600, 1, ["1255"] * 8, "q_2h", "1:ppn=8:cl_zegox"),
        line(1, 0, 0, 100, 1, 3600, 1, ["1255"], "q_2h", "1:ppn=1"),
        line(2, 0, 0, 100, 64, 3600, 1, ["1129"] * 64, "q_2h", "1:ppn=64"),
    ]) + "\n")
    workload = load_workload(path)
    assert infer(workload).host_clusters == {"1129": "cluster-64", "1255": "zegox"}
    # with the machine: 1129 held 64 cores at once, only zewura's nodes have that many
    assert infer(workload, parse_machines(MACHINE)).host_clusters == {"1129": "zewura", "1255": "zegox"}


def test_jobs_without_a_recorded_start_are_left_out_and_counted(tmp_path):
    path = tmp_path / "nostart.swf"
    path.write_text("\n".join([TRACE[0], TRACE[4].replace(f"{T0} 0 1000", f"{T0} -1 1000")]) + "\n")
    found = infer(load_workload(path))
    assert [q.name for q in found.queues] == ["q_2h"]
    assert sum(found.left_out.values()) == 1
    assert "# 1 job left out: no recorded start time" in found.queues_yaml()


def test_times_are_shown_in_the_trace_time_zone(tmp_path):
    path = tmp_path / "tz.swf"
    path.write_text("; TimeZoneString: Europe/Prague\n" + TRACE[4] + "\n")
    q = infer(load_workload(path)).queues[0]
    assert q.max_cores.why == "12 cores running at once on 2013-02-14 11:00"   # CET = UTC + 1


@pytest.mark.parametrize("seconds, expected", [(1, "1h"), (3600, "1h"), (3601, "2h"), (86400, "1d"),
                                               (13 * 86400 + 1, "2w"), (62 * 86400, "90d"), (400 * 86400, "400d")])
def test_round_walltime(seconds, expected):
    assert round_walltime(seconds)[1] == expected


def test_peak_counts_ends_before_starts_at_the_same_instant():
    import numpy as np

    assert peak(np.array([0, 10]), np.array([10, 20]), np.array([3, 5])) == (5, 10)
    assert peak(np.array([0, 5]), np.array([10, 20]), np.array([3, 5])) == (8, 5)


def test_exec_hosts_keep_cores_per_host():
    assert exec_hosts_text(["1129", "1129", "1130"]) == "1129;1130"


def test_cli_writes_both_files(trace, tmp_path, capsys):
    queues, machines = tmp_path / "q.yaml", tmp_path / "m.yaml"
    assert main(["infer", str(trace), "--queues-out", str(queues), "--machines-out", str(machines)]) == 0
    assert parse_queue_config(queues.read_text()).index("q_1d") is not None
    assert parse_machines(machines.read_text()).cores == 2 * 9 + 12
    assert "2 queues from 5 jobs" in capsys.readouterr().err


def test_cli_with_a_machine_refuses_to_write_an_inferred_one(trace, tmp_path, capsys):
    machine = tmp_path / "given.machines"
    machine.write_text(MACHINE)
    code = main(["infer", str(trace), "--machines", str(machine), "--queues-out", str(tmp_path / "q.yaml"),
                 "--machines-out", str(tmp_path / "m.yaml")])
    assert code == 2
    assert "one was given" in capsys.readouterr().err


def test_a_pbs_accounting_log(tmp_path):
    """The real OpenPBS log behind PBSeasy: one queue, two hosts of 2 cores, users by name, times in
    the log's own offset (UTC+01:00)."""
    from tests.shared_data import SHARED_DATA

    found = infer(load_workload(SHARED_DATA / "metacentrum" / "fairsharesim" / "OpenPBS.log"))
    (workq,) = found.queues
    assert workq.name == "workq" and workq.walltime.value == "2h" and workq.max_cores.value == 4
    assert workq.pool.value == ["torque"] and workq.user_max_cores.why.startswith("user ")
    assert workq.user_max_cores.why.split()[1] in ("vchlum", "klusacek")
    assert found.time_zone == "UTC+01:00" and "on 2024-12-21 17:58" in workq.max_cores.why
    machine = found.machine
    assert [(c.name, c.nodes) for c in machine.clusters] == [("torque", 2)]
    assert machine.clusters[0].cores <= 3      # 2 in reality; a 3-core job on two hosts is shared evenly (1 each)
