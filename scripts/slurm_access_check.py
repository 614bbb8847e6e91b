"""Ask a real Slurm what it does with the jobs a partition's access lists and limits keep out (issue 24 §2).

For EnforcePartLimits=NO and then ALL: the test partitions below are added to slurm.conf (they take the
PartitionName=DEFAULT line's nodes), slurmctld reconfigured, each case submitted as its user, and
sbatch's answer (the job id, or its error) and, for a queued job, the reason squeue shows once the
schedulers have seen it are recorded; then the jobs are cancelled and slurm.conf is put back.
Writes OUTDIR/cases.tsv (enforce, case, user, account, partition, qos, cpus, limit_min, sbatch, reason)
and OUTDIR/partitions.conf (the lines added).

Run as root on the host where tests/data/slurm_replay was recorded (users alice, bob, carol, dave, erin;
accounts physics, chemistry, teaching; QOS normal, bulk):
    python3 scripts/slurm_access_check.py OUTDIR [--conf /etc/slurm/slurm.conf]
"""

from __future__ import annotations

import argparse
import subprocess
import time
from pathlib import Path

PARTITIONS = """\
PartitionName=lab AllowAccounts=physics MaxTime=10
PartitionName=nochem DenyAccounts=chemistry MaxTime=10
PartitionName=normalonly AllowQOS=normal MaxTime=10
PartitionName=nobulk DenyQOS=bulk MaxTime=10
PartitionName=both AllowAccounts=physics AllowQOS=normal MaxTime=10
"""

#: (case, user, account, partition, qos, cpus, limit in minutes)
CASES = [
    ("allowed account", "alice", "physics", "lab", "normal", 1, 1),
    ("account not in AllowAccounts", "dave", "chemistry", "lab", "normal", 1, 1),
    ("account not denied", "bob", "physics", "nochem", "normal", 1, 1),
    ("account in DenyAccounts", "carol", "chemistry", "nochem", "normal", 1, 1),
    ("QOS not in AllowQOS", "dave", "chemistry", "normalonly", "bulk", 1, 1),
    ("QOS in DenyQOS", "dave", "chemistry", "nobulk", "bulk", 1, 1),
    ("QOS not denied", "dave", "chemistry", "nobulk", "normal", 1, 1),
    ("account and QOS both out", "dave", "chemistry", "both", "bulk", 1, 1),
    ("time limit over MaxTime", "alice", "physics", "lab", "normal", 1, 15),
    ("time limit over MaxTime, account out", "dave", "chemistry", "lab", "normal", 1, 15),
]
SETTLE = 25     # seconds for the main scheduler (sched_interval 10) and backfill (bf_interval 5) to see the jobs


def run(command: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(command, capture_output=True, text=True)


def reconfigure(conf: Path, text: str) -> None:
    conf.write_text(text)
    result = run(["scontrol", "reconfigure"])
    if result.returncode:
        raise SystemExit(f"scontrol reconfigure failed: {result.stderr.strip()}")
    time.sleep(3)


def submit_all(enforce: str) -> list[list[str]]:
    rows, queued = [], []
    for case, user, account, partition, qos, cpus, limit in CASES:
        result = run(["runuser", "-u", user, "--", "sbatch", "--parsable", "-p", partition, "-A", account, "-q", qos,
                      "-n", str(cpus), "-t", str(limit), "-J", "access", "-o", "/dev/null", "--chdir", "/tmp",
                      "--wrap", "sleep 60"])
        answer = result.stdout.strip() if result.returncode == 0 else result.stderr.strip().splitlines()[-1]
        rows.append([enforce, case, user, account, partition, qos, str(cpus), str(limit), answer, ""])
        queued.append(answer if result.returncode == 0 else "")
    time.sleep(SETTLE)
    shown = dict(line.split("|", 1) for line in run(["squeue", "-h", "-t", "all", "-o", "%i|%T %r"]).stdout.split("\n")
                 if "|" in line)
    for row, job in zip(rows, queued):
        row[-1] = shown.get(job, "") if job else ""
    run(["scancel", "--name", "access"])
    time.sleep(3)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--conf", default="/etc/slurm/slurm.conf")
    args = parser.parse_args()
    out, conf = Path(args.out), Path(args.conf)
    out.mkdir(parents=True, exist_ok=True)
    original = conf.read_text()
    base = "\n".join(line for line in original.splitlines() if not line.startswith("EnforcePartLimits")) + "\n"
    (out / "partitions.conf").write_text(PARTITIONS)
    rows = []
    try:
        for enforce in ("NO", "ALL"):
            reconfigure(conf, base + PARTITIONS + f"EnforcePartLimits={enforce}\n")
            rows += submit_all(enforce)
    finally:
        reconfigure(conf, original)
    header = ["enforce", "case", "user", "account", "partition", "qos", "cpus", "limit_min", "sbatch", "squeue"]
    (out / "cases.tsv").write_text("\t".join(header) + "\n" + "".join("\t".join(r) + "\n" for r in rows))
    print((out / "cases.tsv").read_text())


if __name__ == "__main__":
    main()
