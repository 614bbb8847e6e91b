"""Submit a seeded, time-compressed workload of sleep jobs to a real Slurm and record what it did.

Made for SchedLab's replay check (issue 24): several users in accounts with different shares, two
partitions, a QOS limit, enough work to keep a queue. Writes, in the output directory:
  workload.tsv   the jobs as submitted (offset s, user, account, partition, qos, cpus, limit min, sleep s)
  submitted.tsv  job id, the submit wall clock (epoch) and the row of workload.tsv
  sprio.txt      sprio snapshots every SNAPSHOT seconds ("# epoch" lines, then sprio's own lines)
  squeue.txt     squeue snapshots with each pending job's reason, same rhythm
Run as root on the Slurm host: python3 run_workload.py OUTDIR [--seed 24] [--jobs 330] [--span 2400] [--site site1]
"""

from __future__ import annotations

import argparse
import random
import subprocess
import time
from pathlib import Path

USERS = {  # user: (account, share of the jobs)
    "alice": ("physics", 0.30), "bob": ("physics", 0.15), "carol": ("chemistry", 0.25),
    "dave": ("chemistry", 0.20), "erin": ("teaching", 0.10),
}
CPUS = [1, 1, 1, 2, 2, 4, 4, 8, 16]
SNAPSHOT = 20
CAPACITY = 16
TARGET_LOAD = 1.15
BURSTS = 5


def site1_job(rng: random.Random, user: str) -> tuple[str, int]:
    """slurm_replay's site: short/long, QOS bulk for 40 % of dave's jobs (partition, limit min, qos)."""
    partition = "short" if rng.random() < 0.72 else "long"
    limit = rng.randint(1, 5) if partition == "short" else rng.randint(5, 20)
    return partition, limit


def site1_qos(rng: random.Random, user: str, cpus: int, limit: int) -> str:
    return "bulk" if user == "dave" and rng.random() < 0.4 else "normal"


# slurm_replay_site2's site: 12 CPUs, three partitions (debug on a higher PriorityTier), QOS normal
# (MaxTRESPU cpu=6), bulk (GrpTRES cpu=8, MaxWall 10 min) and wide (jobs over 6 CPUs, MaxJobsPU 1)
SITE2_USERS = {
    "alice": ("physics", 0.22), "bob": ("physics", 0.12), "carol": ("chemistry", 0.18),
    "dave": ("chemistry", 0.14), "frank": ("biology", 0.14), "grace": ("biology", 0.10),
    "erin": ("teaching", 0.10),
}


def site2_job(rng: random.Random, user: str) -> tuple[str, int]:
    draw = rng.random()
    partition = "debug" if draw < 0.15 else "short" if draw < 0.75 else "long"
    limit = {"debug": rng.randint(1, 2), "short": rng.randint(1, 5), "long": rng.randint(5, 20)}[partition]
    return partition, limit


def site2_qos(rng: random.Random, user: str, cpus: int, limit: int) -> str:
    if cpus > 6:
        return "wide"
    return "bulk" if user in ("dave", "frank", "grace") and limit <= 10 and rng.random() < 0.4 else "normal"


SITES = {
    "site1": {"users": USERS, "cpus": CPUS, "capacity": CAPACITY, "load": TARGET_LOAD, "job": site1_job,
              "qos": site1_qos, "timeouts": 0.04},
    "site2": {"users": SITE2_USERS, "cpus": [1, 1, 1, 2, 2, 3, 4, 4, 6, 8, 12], "capacity": 12, "load": 0.8,
              "job": site2_job, "qos": site2_qos, "timeouts": 0.01},
}


def make_workload(seed: int, jobs: int, span: int, site: str = "site1") -> list[dict]:
    profile = SITES[site]
    rng = random.Random(seed)
    users = list(profile["users"])
    weights = [profile["users"][u][1] for u in users]
    rows = []
    # bursts: a third of the jobs arrive in five short bursts of one user each (a queue builds up)
    burst_starts = sorted(rng.uniform(0, span * 0.8) for _ in range(BURSTS))
    for i in range(jobs):
        if i % 3 == 0:
            b = burst_starts[(i // 3) % BURSTS]
            offset = b + rng.uniform(0, 60)
            user = users[(i // 3) % BURSTS]
        else:
            offset = rng.uniform(0, span)
            user = rng.choices(users, weights)[0]
        partition, limit = profile["job"](rng, user)
        cpus = rng.choice(profile["cpus"])
        fraction = rng.uniform(0.05, 1.0) ** 1.5
        sleep = max(5, int(limit * 60 * fraction))
        if rng.random() < profile["timeouts"]:
            sleep = limit * 60 + 90          # runs into its time limit: TIMEOUT
        qos = profile["qos"](rng, user, cpus, limit)
        rows.append({"offset": offset, "user": user, "account": profile["users"][user][0], "partition": partition,
                     "qos": qos, "cpus": cpus, "limit": limit, "sleep": sleep})
    # scale the sleeps so the work is the site's target load x the machine over the span
    work = sum(min(r["sleep"], r["limit"] * 60) * r["cpus"] for r in rows)
    scale = profile["load"] * profile["capacity"] * span / work
    for r in rows:
        over = r["sleep"] > r["limit"] * 60
        r["sleep"] = r["limit"] * 60 + 90 if over else max(5, min(int(r["sleep"] * scale), r["limit"] * 60 - 5))
        r["offset"] = round(r["offset"], 1)
    rows.sort(key=lambda r: r["offset"])
    return rows


def snapshot(out: Path) -> None:
    now = int(time.time())
    sprio = subprocess.run(["sprio", "-h", "-o", "%i|%u|%r|%P|%Y|%A|%F|%J|%Q"], capture_output=True, text=True).stdout
    squeue = subprocess.run(["squeue", "-h", "-t", "all", "-o", "%i|%u|%P|%q|%T|%r|%Q|%V|%S"],
                            capture_output=True, text=True).stdout
    with open(out / "sprio.txt", "a") as f:
        f.write(f"# {now}\n{sprio}")
    with open(out / "squeue.txt", "a") as f:
        f.write(f"# {now}\n{squeue}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--seed", type=int, default=24)
    parser.add_argument("--jobs", type=int, default=330)
    parser.add_argument("--span", type=int, default=2400)
    parser.add_argument("--site", choices=sorted(SITES), default="site1",
                        help="site1: slurm_replay's users and partitions; site2: slurm_replay_site2's")
    parser.add_argument("--dry-run", action="store_true", help="write workload.tsv only, submit nothing")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows = make_workload(args.seed, args.jobs, args.span, args.site)
    keys = ["offset", "user", "account", "partition", "qos", "cpus", "limit", "sleep"]
    (out / "workload.tsv").write_text("\t".join(keys) + "\n" + "".join(
        "\t".join(str(r[k]) for k in keys) + "\n" for r in rows))
    if args.dry_run:
        return
    begin = time.time()
    next_snapshot = begin
    with open(out / "submitted.tsv", "w") as submitted:
        submitted.write("jobid\tepoch\t" + "\t".join(keys) + "\n")
        for i, r in enumerate(rows):
            while True:
                now = time.time()
                if now >= next_snapshot:
                    snapshot(out)
                    next_snapshot += SNAPSHOT
                wait = begin + r["offset"] - now
                if wait <= 0:
                    break
                time.sleep(min(wait, max(0.05, next_snapshot - now)))
            command = ["runuser", "-u", r["user"], "--", "sbatch", "--parsable", "-p", r["partition"],
                       "-A", r["account"], "-q", r["qos"], "-n", str(r["cpus"]), "-t", str(r["limit"]),
                       "-J", f"j{i:03d}", "-o", "/dev/null", "--chdir", "/tmp", "--wrap", f"sleep {r['sleep']}"]
            result = subprocess.run(command, capture_output=True, text=True)
            jobid = result.stdout.strip() or f"ERROR:{result.stderr.strip()}"
            submitted.write(f"{jobid}\t{time.time():.1f}\t" + "\t".join(str(r[k]) for k in keys) + "\n")
            submitted.flush()
    while subprocess.run(["squeue", "-h"], capture_output=True, text=True).stdout.strip():
        if time.time() >= next_snapshot:
            snapshot(out)
            next_snapshot += SNAPSHOT
        time.sleep(2)
    snapshot(out)


if __name__ == "__main__":
    main()
