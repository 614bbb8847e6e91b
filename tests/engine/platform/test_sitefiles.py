"""A site's files as texts (engine.platform.sitefiles): read with one-line errors, the common keys with the
site's values, and a change written into a copy leaving every other line as it was; and the pending
reasons in the scheduler's words (engine.metrics.sitepending) on a hand-worked schedule."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from engine.metrics.sitepending import held_by_reason, pending_reasons
from engine.platform.sitefiles import Key, common_keys, site_from_texts, sweepable_keys, with_change
from engine.workload.errors import WorkloadError

DATA = Path(__file__).resolve().parents[2] / "data"
SLURM = {"slurm.conf": (DATA / "slurm_replay" / "slurm.conf").read_text(),
         "qos": (DATA / "slurm_replay" / "qos.txt").read_text(),
         "assoc": (DATA / "slurm_replay" / "assoc.txt").read_text()}
PBS = {"print server": (DATA / "pbs_site" / "print_server.txt").read_text(),
       "sched_config": (DATA / "pbs_site" / "sched_config").read_text()}


def changed_lines(before: str, after: str) -> list[tuple[str, str]]:
    a, b = before.splitlines(), after.splitlines()
    assert len(a) == len(b)
    return [(x, y) for x, y in zip(a, b) if x != y]


def keys(texts: dict, kind: str = "slurm") -> dict[str, Key]:
    return {k.label: k for k in common_keys(site_from_texts(kind, texts))}


def test_the_common_keys_carry_the_sites_values():
    found = keys(SLURM)
    assert found["short MaxTime"].value == "00:05:00" and found["long MaxTime"].value == "00:20:00"
    assert found["normal MaxJobsPU"].value == "4" and found["bulk MaxJobsPU"].value == "2"
    assert found["PriorityWeightFairshare"].value == "10000" and found["bf_max_job_test"].value == "100"
    assert found["bf_continue"].value == "yes" and found["normal MaxWall"].value == ""
    assert found["normal GrpSubmit"].value == ""


def test_a_qos_grp_submit_and_a_queues_max_queued_are_form_keys():
    changed = with_change(SLURM, keys(SLURM)["bulk GrpSubmit"], "30")
    (before, after), = changed_lines(SLURM["qos"], changed["qos"])
    assert before.startswith("bulk|") and site_from_texts("slurm", changed).qos["bulk"].grp_submit == 30
    queue = next(label for label in keys(PBS, "pbs") if label.endswith(" max_queued"))
    changed = with_change(PBS, keys(PBS, "pbs")[queue], "[u:PBS_GENERIC=20]")
    server = site_from_texts("pbs", changed)
    assert server.queues[queue.split()[0]].max_queued.generic_user() == 20
    assert keys(changed, "pbs")[queue].value == "[u:PBS_GENERIC=20]"


@pytest.mark.parametrize("label, value, line", [
    ("PriorityWeightFairshare", "20000", ("PriorityWeightFairshare=10000", "PriorityWeightFairshare=20000")),
    ("short MaxTime", "01:00:00", ("PartitionName=short Default=YES MaxTime=00:05:00 DefaultTime=00:02:00 PriorityJobFactor=2",
                                  "PartitionName=short Default=YES MaxTime=01:00:00 DefaultTime=00:02:00 PriorityJobFactor=2")),
    ("bf_max_job_test", "1000", ("SchedulerParameters=bf_interval=5,bf_resolution=10,bf_window=120,bf_max_job_test=100,"
                                 "bf_continue,default_queue_depth=100,sched_interval=10",
                                 "SchedulerParameters=bf_interval=5,bf_resolution=10,bf_window=120,bf_max_job_test=1000,"
                                 "bf_continue,default_queue_depth=100,sched_interval=10")),
])
def test_a_change_is_one_line_of_slurm_conf(label, value, line):
    changed = with_change(SLURM, keys(SLURM)[label], value)
    assert changed_lines(SLURM["slurm.conf"], changed["slurm.conf"]) == [line]
    assert changed["qos"] == SLURM["qos"]
    assert keys(changed)[label].value == value


def test_a_qos_limit_is_one_cell_of_the_dump():
    changed = with_change(SLURM, keys(SLURM)["normal MaxJobsPU"], "50")
    (before, after), = changed_lines(SLURM["qos"], changed["qos"])
    assert before.startswith("normal|") and after == before.replace("||4|", "||50|")
    assert site_from_texts("slurm", changed).qos["normal"].max_jobs_per_user == 50


def test_a_key_not_written_yet_is_added_and_an_empty_value_removes_it():
    conf = "NodeName=n1 CPUs=4\nPartitionName=p Nodes=n1\n"
    site = {"slurm.conf": conf}
    added = with_change(site, Key("slurm.conf", "p", "MaxTime", "UNLIMITED"), "2-00:00:00")
    assert added["slurm.conf"] == "NodeName=n1 CPUs=4\nPartitionName=p Nodes=n1 MaxTime=2-00:00:00\n"
    weight = with_change(added, Key("slurm.conf", "", "PriorityWeightAge", "0"), "500")
    assert weight["slurm.conf"].endswith("PriorityWeightAge=500\n")
    removed = with_change(weight, Key("slurm.conf", "p", "MaxTime", "2-00:00:00"), "")
    assert "MaxTime" not in removed["slurm.conf"]
    flag = with_change(site, Key("slurm.conf", "", "bf_continue", "no"), "yes")
    assert "SchedulerParameters=bf_continue" in flag["slurm.conf"]


def test_bad_texts_name_the_file_the_line_and_the_key():
    bad = with_change(SLURM, keys(SLURM)["short MaxTime"], "soon")
    with pytest.raises(WorkloadError) as error:
        site_from_texts("slurm", bad)
    line = next(n for n, text in enumerate(bad["slurm.conf"].splitlines(), 1) if text.startswith("PartitionName=short"))
    assert (error.value.file, error.value.line, error.value.field) == ("slurm.conf", line, "MaxTime")
    with pytest.raises(WorkloadError) as error:
        site_from_texts("slurm", {**SLURM, "qos": SLURM["qos"].replace("||4|", "||four|")})
    assert error.value.file == "qos" and error.value.line == 2
    with pytest.raises(WorkloadError, match="needed"):
        site_from_texts("slurm", {"qos": SLURM["qos"]})


def test_pbs_keys_and_changes():
    found = keys(PBS, "pbs")
    assert found["workq max_run"].value == "" and found["fair_share"].value == "true"
    changed = with_change(PBS, found["workq max_run"], "[u:PBS_GENERIC=2]")
    assert "set queue workq max_run = [u:PBS_GENERIC=2]" in changed["print server"].splitlines()
    assert site_from_texts("pbs", changed).queues["workq"].max_run.generic_user() == 2
    by_queue = with_change(PBS, found["by_queue"], "false")
    assert [line for line in by_queue["sched_config"].splitlines() if line.startswith("by_queue")] == ["by_queue: false\tALL"]
    assert keys(by_queue, "pbs")["by_queue"].value == "false"
    # help_starving_jobs, max_starve (sweepable) and the server's eligible_time_enable are form keys
    starving = with_change(with_change(PBS, found["help_starving_jobs"], "true"), found["max_starve"], "12:00:00")
    starving = with_change(starving, found["eligible_time_enable"], "True")
    site = site_from_texts("pbs", starving)
    assert site.sched["help_starving_jobs"] == "true" and site.sched["max_starve"] == "12:00:00"
    assert site.eligible_time_enable is True and "set server eligible_time_enable = True" in starving["print server"]
    assert "max_starve" in {k.label for k in sweepable_keys(site)}


def test_a_limit_print_server_writes_over_two_lines_is_one_key_and_one_line_when_changed():
    # qmgr's print server splits a limit of two entries at its comma: "=" then "+=" (qmgr.c). The
    # form shows the whole limit; setting it replaces both lines with one, so a dropped entry goes
    texts = {"print server": "create queue workq\nset queue workq max_run = [u:PBS_GENERIC=10]\n"
                             "set queue workq max_run += [u:alice=5]\nset queue workq priority = 1\n"}
    found = keys(texts, "pbs")
    assert found["workq max_run"].value == "[u:PBS_GENERIC=10],[u:alice=5]"
    changed = with_change(texts, found["workq max_run"], "[u:PBS_GENERIC=3]")
    assert changed["print server"].splitlines() == ["create queue workq", "set queue workq max_run = [u:PBS_GENERIC=3]",
                                                    "set queue workq priority = 1"]
    assert site_from_texts("pbs", changed).queues["workq"].max_run.values == {("u", "PBS_GENERIC"): 3}


def test_max_run_res_ncpus_of_a_queue_and_the_servers_limits_are_form_keys():
    texts = {"print server": "create queue workq\nset queue workq max_run_res.ncpus = [u:PBS_GENERIC=8]\n"
                             "set server max_run = [o:PBS_ALL=100]\n"}
    found = keys(texts, "pbs")
    assert found["workq max_run_res.ncpus"].value == "[u:PBS_GENERIC=8]"
    assert found["max_run"].value == "[o:PBS_ALL=100]" and found["max_run_res.ncpus"].value == ""
    changed = with_change(texts, found["max_run_res.ncpus"], "[u:PBS_GENERIC=16]")
    changed = with_change(changed, found["workq max_run_res.ncpus"], "[u:PBS_GENERIC=4],[u:alice=8]")
    assert changed["print server"].splitlines() == [
        "create queue workq", "set queue workq max_run_res.ncpus = [u:PBS_GENERIC=4],[u:alice=8]",
        "set server max_run = [o:PBS_ALL=100]", "set server max_run_res.ncpus = [u:PBS_GENERIC=16]"]
    site = site_from_texts("pbs", changed)
    assert site.max_run_res["ncpus"].generic_user() == 16
    assert site.queues["workq"].max_run_res["ncpus"].values == {("u", "PBS_GENERIC"): 4, ("u", "alice"): 8}
    assert {"workq max_run_res.ncpus", "max_run", "max_run_res.ncpus"} <= {k.label for k in sweepable_keys(site)}


def test_pending_reasons_on_a_hand_worked_schedule():
    # 4 CPUs, QOS normal MaxJobsPU 1, partition short MaxTime 10 min. Jobs (submit, start, end, procs):
    # 1 ann 0-100 4 CPUs; 2 ann submitted 10, starts 100: ann runs job 1 in QOS normal, so the QOS
    #   limit holds it (checked before resources, as Slurm does): QOSMaxJobsPerUserLimit 90 s;
    # 3 bob submitted 20, 1 CPU, starts 150: Resources 20-100, QOS? no (bob runs nothing), then
    #   job 2 holds all 4 CPUs 100-150: Resources again -> 130 s Resources
    # 4 ann submitted 20, 1 CPU, asks 20 min on short: PartitionTimeLimit its whole wait 20-160
    # 5 cid submitted 150, 1 CPU, starts 160 with 3 CPUs free (job 3 holds one): Priority 10 s
    texts = {"slurm.conf": "NodeName=n CPUs=4\nAccountingStorageEnforce=limits\nPartitionName=short Nodes=n MaxTime=10 Default=YES\n",
             "qos": "Name|MaxJobsPU\nnormal|1\n"}
    site = site_from_texts("slurm", texts)
    schedule = pd.DataFrame({"job_id": [1, 2, 3, 4, 5], "submit": [0, 10, 20, 20, 150], "start": [0, 100, 150, 160, 160],
                             "end": [100, 150, 400, 400, 400], "procs": [4, 4, 1, 1, 1]})
    jobs = pd.DataFrame({"job_id": [1, 2, 3, 4, 5], "user": [1, 1, 2, 1, 3], "queue_name": ["short"] * 5,
                         "qos": ["normal"] * 5, "requested_time": [600, 600, 600, 1200, 600]})
    held = pending_reasons(schedule, jobs, site, 4, {"1": "ann", "2": "bob", "3": "cid"}).set_index("job_id")
    assert held.loc[2].to_dict() == {"PartitionTimeLimit": 0, "QOSMaxWallDurationPerJobLimit": 0,
                                     "QOSMaxJobsPerUserLimit": 90, "Resources": 0, "Priority": 0}
    assert held.loc[3, "Resources"] == 130 and held.loc[3].sum() == 130
    assert held.loc[4, "PartitionTimeLimit"] == 140 and held.loc[4].sum() == 140
    assert held.loc[5, "Priority"] == 10 and held.loc[5].sum() == 10
    rows = {row["reason"]: row for row in held_by_reason(held.reset_index(), schedule)}
    assert rows["Resources"]["jobs"] == 1 and rows["Resources"]["hours"] == pytest.approx(130 / 3600)
    assert rows["Resources"]["cpu_hours"] == pytest.approx(130 / 3600)
    assert rows["PartitionTimeLimit"]["jobs"] == 1


def test_a_qos_user_limit_holds_a_second_job():
    # MaxJobsPU 1: ann's second 1-CPU job waits 0-50 while her first runs on a machine with 3 CPUs free
    site = site_from_texts("slurm", {"slurm.conf": "NodeName=n CPUs=4\nAccountingStorageEnforce=limits\n"
                                                    "PartitionName=p Nodes=n Default=YES\n",
                                     "qos": "Name|MaxJobsPU\nnormal|1\n"})
    schedule = pd.DataFrame({"job_id": [1, 2], "submit": [0, 0], "start": [0, 50], "end": [50, 60], "procs": [1, 1]})
    jobs = pd.DataFrame({"job_id": [1, 2], "user": [1, 1]})
    held = pending_reasons(schedule, jobs, site, 4)
    assert held.set_index("job_id").loc[2, "QOSMaxJobsPerUserLimit"] == 50


def test_without_accounting_storage_enforce_limits_the_qos_holds_nothing():
    # the same MaxJobsPU 1 (and a MaxWall of 1 min) on a site whose slurm.conf does not enforce
    # limits (Slurm's default): ann's second job, 3 CPUs free, waits under Priority, no QOS reason
    site = site_from_texts("slurm", {"slurm.conf": "NodeName=n CPUs=4\nPartitionName=p Nodes=n Default=YES\n",
                                     "qos": "Name|MaxJobsPU|MaxWall\nnormal|1|1\n"})
    schedule = pd.DataFrame({"job_id": [1, 2], "submit": [0, 0], "start": [0, 50], "end": [50, 60], "procs": [1, 1]})
    jobs = pd.DataFrame({"job_id": [1, 2], "user": [1, 1], "requested_time": [600, 600]})
    held = pending_reasons(schedule, jobs, site, 4).set_index("job_id")
    assert held.loc[2].to_dict() == {"PartitionTimeLimit": 0, "QOSMaxWallDurationPerJobLimit": 0,
                                     "QOSMaxJobsPerUserLimit": 0, "Resources": 0, "Priority": 50}


def test_only_the_top_waiting_job_of_a_partition_is_held_by_resources():
    # 2 CPUs, one running to 100; two 1-CPU jobs wait for it: the first submitted shows Resources,
    # the one behind it Priority (squeue's way), in each partition separately
    site = site_from_texts("slurm", {"slurm.conf": "NodeName=n CPUs=2\nPartitionName=a Nodes=n Default=YES\n"
                                                   "PartitionName=b Nodes=n\n"})
    schedule = pd.DataFrame({"job_id": [1, 2, 3, 4], "submit": [0, 0, 5, 10], "start": [0, 100, 100, 150],
                             "end": [100, 150, 150, 160], "procs": [2, 1, 1, 1]})
    jobs = pd.DataFrame({"job_id": [1, 2, 3, 4], "user": [1, 2, 3, 4], "queue_name": ["a", "a", "a", "b"]})
    held = pending_reasons(schedule, jobs, site, 2).set_index("job_id")
    assert held.loc[2, "Resources"] == 100 and held.loc[2].sum() == 100
    assert held.loc[3, "Priority"] == 95 and held.loc[3].sum() == 95
    assert held.loc[4, "Resources"] == 140 and held.loc[4].sum() == 140   # b's top job, no free CPU 10-150


def test_the_recorded_runs_reasons_are_close_to_what_the_real_squeue_showed():
    """tests/data/slurm_replay: squeue every 20 s during the real run counted 35.4 pending hours under
    Priority, 1.1 under Resources plus 1.0 under "Nodes required ... higher priority partitions"
    (Slurm's Resources of a partition blocked by another's top job), 1.3 under QOSMaxJobsPerUserLimit.
    The estimate from the recorded schedule: 35.9, 2.1 (both Resources together), 0.9."""
    import gzip
    from collections import Counter

    from engine.workload import load_workload

    folder = DATA / "slurm_replay"
    workload = load_workload(folder / "sacct.txt", procs=16)
    jobs = workload.jobs
    recorded = pd.DataFrame({"job_id": jobs["job_id"], "submit": jobs["submit"],
                             "start": jobs["submit"] + jobs["wait_trace"], "procs": jobs["procs"]})
    recorded["end"] = recorded["start"] + jobs["runtime"]
    held = pending_reasons(recorded, jobs, site_from_texts("slurm", SLURM), 16, workload.metadata["user_names"])
    hours = {row["reason"]: row["hours"] for row in held_by_reason(held)}
    samples: Counter[str] = Counter()
    with gzip.open(folder / "squeue.txt.gz", "rt") as lines:
        for line in lines:
            fields = line.rstrip("\n").split("|")
            if not line.startswith("#") and fields[4] == "PENDING":
                samples[fields[5]] += 1
    real = {reason: n * 20 / 3600 for reason, n in samples.items()}
    blocked = real.pop("Nodes required for job are DOWN, DRAINED or reserved for jobs in higher priority partitions")
    assert hours["Priority"] == pytest.approx(real["Priority"], rel=0.05)
    assert hours["Resources"] == pytest.approx(real["Resources"] + blocked, rel=0.1)
    assert hours["QOSMaxJobsPerUserLimit"] == pytest.approx(real["QOSMaxJobsPerUserLimit"], rel=0.4)
    assert sum(hours.values()) == pytest.approx(sum(real.values()) + blocked, rel=0.05)
