"""A partition's access lists and node/time limits (slurm.conf(5) AllowAccounts, DenyAccounts, AllowQOS,
DenyQOS, MinNodes, MaxNodes, MaxTime; EnforcePartLimits), each on a tiny hand-worked case as slurmctld
22.05 treats it (job_mgr.c _part_access_check, job_limits_check; partition_mgr.c part_policy_valid_acct
/ _qos): without EnforcePartLimits the job pends for ever with the reason squeue shows, with it sbatch
refuses the job with its error."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from engine.cli import main, refused_note
from engine.platform.slurmconf import Association, Qos, SlurmSite, parse_slurm_conf, read_associations, read_qos
from engine.policies.slurmlimits import INVALID_ACCOUNT, INVALID_NODE_COUNT, INVALID_QOS, INVALID_TIME_LIMIT
from engine.run import simulate

from ..conftest import make_workload
from .test_slurm_rules import BASE, run, starts

ASSOCS = [Association("c", "phys", shares=1), Association("c", "chem", shares=1),
          Association("c", "phys", "u1"), Association("c", "chem", "u2")]


def site(partition_line: str, *, enforce: str = "", qos=("normal", "high")) -> SlurmSite:
    conf = (BASE.replace("NodeName=n1 CPUs=16", "NodeName=n[1-2] CPUs=8") + (f"EnforcePartLimits={enforce}\n" if enforce else "")
            + "PartitionName=open Nodes=n[1-2] Default=YES MaxTime=00:20:00\n" + partition_line + "\n"
            + "SchedulerParameters=bf_interval=5\n")
    return SlurmSite(parse_slurm_conf(conf, "t.conf"), qos={name: Qos(name) for name in qos}, associations=ASSOCS)


def refused(result) -> dict[int, tuple[str, str]]:
    return {int(j): (r, limit) for j, r, limit in zip(result.rejected_jobs["job_id"], result.rejected_jobs["reason"],
                                                        result.rejected_jobs["limit"])}


# u1's jobs are phys's, u2's chem's; every job asks 1 CPU for 60 s, the last one in partition open
ROWS = [(0, 10, 60, 1), (0, 10, 60, 1), (0, 10, 60, 1)]
USERS = [1, 2, 1]
ACCOUNTS = ["phys", "chem", "phys"]


@pytest.mark.parametrize("line, enforce, expected", [
    # without EnforcePartLimits chem's job pends for ever: AccountNotAllowed, which squeue shows as
    # its description (part_policy_valid_acct's state_desc)
    ("PartitionName=lab Nodes=n1 AllowAccounts=phys", "",
     "Job's account not permitted to use this partition (lab allows phys not chem)"),
    ("PartitionName=lab Nodes=n1 DenyAccounts=chem,bio", "",
     "Job's account not permitted to use this partition (lab denies chem,bio including chem)"),
    # with it sbatch refuses it (ESLURM_INVALID_ACCOUNT), ANY or ALL alike for a job of one partition
    ("PartitionName=lab Nodes=n1 AllowAccounts=phys", "YES", INVALID_ACCOUNT),
    ("PartitionName=lab Nodes=n1 DenyAccounts=chem", "ALL", INVALID_ACCOUNT),
])
def test_an_account_the_partition_does_not_allow_never_runs_there(workload, line, enforce, expected):
    result = run(workload, ROWS, site(line, enforce=enforce), users=USERS, accounts=ACCOUNTS,
                 partitions=["lab", "lab", "open"])
    assert starts(result) == {1: 0, 3: 0}
    assert list(refused(result)) == [2]
    assert refused(result)[2][0] == expected
    assert refused(result)[2][1].startswith("partition lab ")


def test_deny_accounts_is_not_read_when_allow_accounts_is_set(workload):
    # part_policy_valid_acct reads DenyAccounts only without AllowAccounts: chem is allowed, phys is not
    result = run(workload, ROWS, site("PartitionName=lab Nodes=n1 AllowAccounts=chem DenyAccounts=chem"),
                 users=USERS, accounts=ACCOUNTS, partitions=["lab", "lab", "lab"])
    assert starts(result) == {2: 0}
    shown = "Job's account not permitted to use this partition (lab allows chem not phys)"
    assert {j: r for j, (r, _) in refused(result).items()} == {1: shown, 3: shown}


@pytest.mark.parametrize("line, enforce, expected", [
    ("PartitionName=lab Nodes=n1 AllowQOS=normal", "", "Job's QOS not permitted to use this partition (lab allows normal not high)"),
    ("PartitionName=lab Nodes=n1 DenyQOS=high", "", "Job's QOS not permitted to use this partition (lab denies high including high)"),
    ("PartitionName=lab Nodes=n1 AllowQOS=normal", "ANY", INVALID_QOS),
])
def test_a_qos_the_partition_does_not_allow_never_runs_there(workload, line, enforce, expected):
    result = run(workload, ROWS, site(line, enforce=enforce), users=USERS, accounts=ACCOUNTS,
                 partitions=["lab", "lab", "lab"], qos=["normal", "high", "normal"])
    assert starts(result) == {1: 0, 3: 0}
    assert refused(result) == {2: (expected, "partition lab " + line.split(" ", 2)[2].replace("=", " "))}


def test_with_both_wrong_the_reason_follows_slurms_order_of_checks(workload):
    # chem's job with QOS high in a partition allowing neither: pending, select_nodes names the QOS
    # first; refused by sbatch, _part_access_check names the account first
    line = "PartitionName=lab Nodes=n1 AllowAccounts=phys AllowQOS=normal"
    for enforce, expected in (("", "Job's QOS not permitted to use this partition (lab allows normal not high)"),
                              ("YES", INVALID_ACCOUNT)):
        result = run(workload, ROWS, site(line, enforce=enforce), users=USERS, accounts=ACCOUNTS,
                     partitions=["lab", "lab", "lab"], qos=["normal", "high", "normal"])
        assert refused(result)[2][0] == expected, enforce


def test_node_and_time_limits_come_before_the_access_lists_and_name_sbatchs_errors_when_enforced(workload):
    line = "PartitionName=lab Nodes=n[1-2] MinNodes=2 MaxTime=00:05:00 AllowAccounts=phys"
    rows = [(0, 10, 60, 16), (0, 10, 60, 8), (0, 10, 600, 16), (0, 10, 60, 16)]
    kwargs = dict(users=[1, 1, 1, 2], accounts=["phys", "phys", "phys", "chem"], partitions=["lab"] * 4,
                  nodes=[2, 1, 2, 2])
    pending = refused(run(workload, rows, site(line), **kwargs))
    assert {j: r for j, (r, _) in pending.items()} == {2: "PartitionNodeLimit", 3: "PartitionTimeLimit",
                                                       4: "Job's account not permitted to use this partition "
                                                          "(lab allows phys not chem)"}
    assert pending[2][1] == "partition lab MinNodes 2"
    enforced = refused(run(workload, rows, site(line, enforce="ALL"), **kwargs))
    assert {j: r for j, (r, _) in enforced.items()} == {2: INVALID_NODE_COUNT, 3: INVALID_TIME_LIMIT,
                                                        4: INVALID_ACCOUNT}


def test_maxnodes_is_checked_before_maxtime(workload):
    # a job over both: _part_access_check tests the node count first
    line = "PartitionName=lab Nodes=n[1-2] MaxNodes=1 MaxTime=00:05:00"
    result = run(workload, [(0, 10, 600, 16)], site(line), partitions=["lab"], nodes=[2], accounts=["phys"])
    assert refused(result) == {1: ("PartitionNodeLimit", "partition lab MaxNodes 1")}


def test_a_qos_flag_lets_a_job_past_minnodes(workload):
    line = "PartitionName=lab Nodes=n[1-2] MinNodes=2"
    s = site(line)
    s.qos["normal"] = Qos("normal", flags=["PartitionMinNodes"])
    result = run(workload, [(0, 10, 60, 8)], s, partitions=["lab"], nodes=[1], qos=["normal"], accounts=["phys"])
    assert starts(result) == {1: 0}


def test_a_job_over_a_down_partitions_maxtime_is_named_for_the_limit(workload):
    # job_limits_check runs _part_access_check before it looks at the partition's state
    result = run(workload, [(0, 10, 600, 1), (0, 10, 60, 1)], site("PartitionName=lab Nodes=n1 MaxTime=5 State=DOWN"),
                 partitions=["lab", "lab"], accounts=["phys", "phys"])
    assert [r for r, _ in refused(result).values()] == ["PartitionTimeLimit", "PartitionDown"]


def test_the_command_line_names_the_jobs_an_access_list_shuts_out(tmp_path, capsys):
    # the real Slurm's site with long closed to chemistry and EnforcePartLimits=ALL: sbatch would have
    # refused every chemistry job of long
    data = Path(__file__).resolve().parents[2] / "data" / "slurm_replay"
    line = "PartitionName=long MaxTime=00:20:00 DefaultTime=00:10:00 PriorityJobFactor=1"
    conf = (data / "slurm.conf").read_text().replace(line, line + " AllowAccounts=physics,teaching")
    (tmp_path / "slurm.conf").write_text(conf + "EnforcePartLimits=ALL\n")
    rows = [r.split("|") for r in (data / "sacct.txt").read_text().splitlines()[1:]]
    shut_out = sorted(r[0] for r in rows if r[2] == "long" and r[4] == "chemistry")
    assert main(["simulate", str(data / "sacct.txt"), "--slurm-conf", str(tmp_path / "slurm.conf"),
                 "--qos", str(data / "qos.txt"), "--assoc", str(data / "assoc.txt"), "--policy", "slurm",
                 "--out", str(tmp_path / "s.csv"), "--rejected-out", str(tmp_path / "refused.csv")]) == 0
    assert capsys.readouterr().err.startswith(f"{len(shut_out)} jobs refused at submission, not in the schedule "
                                              f"({len(shut_out)} {INVALID_ACCOUNT}): listed in ")
    refused_rows = pd.read_csv(tmp_path / "refused.csv", dtype=str)
    assert sorted(refused_rows["native_id"]) == shut_out
    assert set(refused_rows["limit"]) == {"partition long AllowAccounts physics,teaching"}


def test_one_refused_job_is_one_job(capsys):
    refused_note(pd.DataFrame({"reason": ["PartitionTimeLimit"]}), None)
    assert capsys.readouterr().err.startswith("1 job refused at submission, not in the schedule (1 PartitionTimeLimit)")


# ------------------------------------------------------------------ against a real Slurm

REAL = Path(__file__).resolve().parents[2] / "data" / "slurm_partition_access"
SITE = Path(__file__).resolve().parents[2] / "data" / "slurm_replay"


def real_cases() -> list[dict[str, str]]:
    lines = (REAL / "cases.tsv").read_text().splitlines()
    header = lines[0].split("\t")
    return [dict(zip(header, line.split("\t"))) for line in lines[1:]]


def replayed(case: dict[str, str]):  # noqa: ANN201
    """The case's one job through the slurm policy on the recorded site with the test partitions."""
    text = (SITE / "slurm.conf").read_text() + (REAL / "partitions.conf").read_text() + \
        f"EnforcePartLimits={case['enforce']}\n"
    site = SlurmSite(parse_slurm_conf(text, "slurm.conf"), qos=read_qos(SITE / "qos.txt"),
                     associations=read_associations(SITE / "assoc.txt"))
    w = make_workload([(0, 10, int(case["limit_min"]) * 60, int(case["cpus"]))], users=[1])
    w.jobs["queue_name"], w.jobs["account"], w.jobs["qos"] = [case["partition"]], [case["account"]], [case["qos"]]
    w.metadata["user_names"] = {"1": case["user"]}
    return simulate(w, 16, {"preset": "slurm", "params": {}}, context={"slurm_site": site})


@pytest.mark.parametrize("case", real_cases(), ids=lambda c: f"{c['enforce']}: {c['case']}")
def test_the_replay_refuses_or_holds_each_job_as_the_real_slurm_did(case):
    """tests/data/slurm_partition_access: what a real Slurm 22.05.8 (sbatch's answer, squeue's reason)
    did with each case, against the replay's refusal and reason."""
    result = replayed(case)
    refused = dict(zip(result.rejected_jobs["job_id"], result.rejected_jobs["reason"]))
    if case["sbatch"].startswith("sbatch: error:"):        # refused by sbatch: its error is the reason
        assert refused == {1: case["sbatch"].split("Batch job submission failed: ", 1)[1]}
    elif case["squeue"].startswith("PENDING "):            # queued to pend for ever: the reason squeue showed
        assert refused == {1: case["squeue"].split(" ", 1)[1]}
    else:                                                  # it ran
        assert case["squeue"].startswith(("RUNNING", "COMPLETED")) and refused == {}
        assert starts(result) == {1: 0}
