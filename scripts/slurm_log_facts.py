"""Read slurmctld's log (SlurmctldDebug=debug3, DebugFlags=Backfill,TraceJobs, LogTimeFormat=iso8601_ms)
and print when each scheduler ran and which started each job (issue 24 §3, tests/data/slurm_replay_debug).

    python3 scripts/slurm_log_facts.py slurmctld.log[.gz] [--excerpt OUT.gz]

--excerpt writes only the lines these facts are read from (gzip), the test data's excerpt.
"""

from __future__ import annotations

import argparse
import bisect
import gzip
import re
import statistics
from collections import Counter
from datetime import datetime
from pathlib import Path

# the lines kept in the excerpt and what each one is
PATTERNS = {
    "submit": r"_slurm_rpc_submit_batch_job: JobId=(\d+)",
    "bf_begin": r"_attempt_backfill: beginning",
    "bf_none": r"_attempt_backfill: no jobs to backfill",
    "bf_done": r"_attempt_backfill: completed testing (\d+)\((\d+)\) jobs, usec=(\d+)",
    "bf_start": r"_start_job: Started JobId=(\d+) in (\w+)",
    "bf_test": r"BACKFILL: test for JobId=(\d+) Prio=(\d+) Partition=(\w+)",
    "bf_plan": r"_dump_job_sched: JobId=(\d+) to start at (\S+), end at (\S+) on nodes \S+ in partition (\w+)",
    "bf_break": r"BACKFILL: (system state changed, breaking out.*|bf_max_job_test.*|reached end of job queue)",
    "bf_skip": r"BACKFILL: have already checked \d+ jobs for user \d+; skipping JobId=(\d+)",
    "held": r"JobId=(\d+) being held, (.*)",
    "main": r"sched: Running job scheduler for (full queue|default depth)",
    "main_skip": r"sched: schedule\(\) returning, (.*)",
    "main_break": r"sched: (already tested \d+ jobs, breaking out|loop taking too long.*|sched_max_job_start.*)",
    "main_job": r"sched: JobId=(\d+)\. State=PENDING\. Reason=([^.,]+)",
    "main_failpart": r"sched: JobId=(\d+)\.? unable to schedule in Partition=(\w+)",
    "alloc": r"sched: Allocate JobId=(\d+) NodeList=\S+ #CPUs=(\d+) Partition=(\w+)",
    "end": r"_job_complete: JobId=(\d+) done",
    "timeout": r"Time limit exhausted for JobId=(\d+)",
    "epilog_rpc": r"_slurm_rpc_epilog_complete: JobId=(\d+)",
    "epilog": r"TRACE_JOBS: job_epilog_complete: enter JobId=(\d+)",
    "cleanup": r"TRACE_JOBS: cleanup_completing: JobId=(\d+)",
    "prio": r"(Decay|_decay_thread|priority_p_set|_ft_decay_apply_new_usage|Fairshare)",
}
COMPILED = {k: re.compile(v) for k, v in PATTERNS.items()}
STAMP = re.compile(r"^\[(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3})\] (.*)$")


def read_events(path: Path) -> list[tuple[float, str, tuple[str, ...]]]:
    opener = gzip.open if path.suffix == ".gz" else open
    events = []
    with opener(path, "rt", errors="replace") as f:
        for line in f:
            m = STAMP.match(line)
            if not m:
                continue
            body = m.group(2)
            for kind, rx in COMPILED.items():
                hit = rx.search(body)
                if hit:
                    t = datetime.fromisoformat(m.group(1)).timestamp()
                    events.append((t, kind, hit.groups()))
                    break
    return events


def write_excerpt(path: Path, out: Path) -> int:
    opener = gzip.open if path.suffix == ".gz" else open
    kept = 0
    with opener(path, "rt", errors="replace") as f, gzip.open(out, "wt") as g:
        for line in f:
            if any(rx.search(line) for rx in COMPILED.values()):
                g.write(line)
                kept += 1
    return kept


def backfill_passes(events: list[tuple[float, str, tuple[str, ...]]]) -> list[dict]:
    """Each backfill pass: its start ``t``, the jobs it tested in order (``tested``: job id,
    partition), those it started (``started``), the planned start of those it did not
    (``planned``: job id -> epoch s, the start _dump_job_sched logged) and those it passed over
    after all (``passed``: bf_max_job_user's "skipping", a limit's "being held" after select)."""
    passes: list[dict] = []
    current: dict | None = None
    for t, kind, g in events:
        if kind == "bf_begin":
            current = {"t": t, "tested": [], "started": set(), "planned": {}, "passed": set()}
            passes.append(current)
        elif current is not None and kind == "bf_test":
            current["tested"].append((g[0], g[2]))
        elif current is not None and kind in ("bf_skip", "held"):
            current["passed"].add(g[0])
        elif current is not None and kind == "bf_start":
            current["started"].add(g[0])
        elif current is not None and kind == "bf_plan":
            current["planned"][g[0]] = int(datetime.fromisoformat(g[1]).timestamp())
        elif kind in ("bf_done", "bf_none"):
            current = None
    return passes


def _gaps(times: list[float]) -> list[float]:
    return [b - a for a, b in zip(times, times[1:])]


def _hist(values: list[float], edges: list[float]) -> str:
    counts = Counter()
    for v in values:
        for e in edges:
            if v < e:
                counts[f"<{e:g}"] += 1
                break
        else:
            counts[f">={edges[-1]:g}"] += 1
    return ", ".join(f"{k}: {counts[k]}" for k in [f"<{e:g}" for e in edges] + [f">={edges[-1]:g}"] if counts[k])


def facts(events: list[tuple[float, str, tuple[str, ...]]]) -> None:
    t0 = next(t for t, k, _ in events if k == "submit")
    def rel(t: float) -> str:
        return f"{t - t0:8.3f}"
    by = {k: [(t, g) for t, kk, g in events if kk == k] for k in PATTERNS}
    ends = sorted(t for t, _ in by["end"] + by["timeout"])       # a job killed at its limit has no _job_complete
    changes = sorted(ends + [t for t, _ in by["submit"]] + [t for t, _ in by["cleanup"]])
    print(f"first submission at {datetime.fromtimestamp(t0)} (times below are seconds after it)")
    print(f"jobs: {len(by['submit'])} submitted, {len(by['end'])} ended, {len(by['timeout'])} timed out")

    # (1) backfill passes
    bf = [t for t, _ in by["bf_begin"] if t >= t0]
    gaps = _gaps(bf)
    print(f"\n(1) backfill passes: {len(bf)}; gaps between pass starts: median {statistics.median(gaps):.2f} s, "
          f"mean {statistics.mean(gaps):.2f} s")
    print("    gaps:", _hist(gaps, [4.9, 5.1, 6.1, 7.1, 8.1, 9.1, 10.1, 15.1, 30.1]))
    done = [(t, g) for t, g in by["bf_done"] if t >= t0]
    if done:
        usec = [int(g[2]) for _, g in done]
        tested = [int(g[0]) for _, g in done]
        print(f"    passes that tested jobs: {len(done)}, jobs tested median {statistics.median(tested):.0f} "
              f"max {max(tested)}, duration median {statistics.median(usec) / 1e3:.1f} ms max {max(usec) / 1e3:.1f} ms")
    # a gap longer than 5 s: was there a change (submission, end) in the 5 s before the earliest allowed pass?
    waited = sum(1 for a, b in zip(bf, bf[1:]) if b - a > 5.5)
    first_change_ok = 0
    for a, b in zip(bf, bf[1:]):
        if b - a <= 5.5:
            continue
        i = bisect.bisect_left(changes, a + 0.01)
        if i < len(changes) and changes[i] < b and b - max(changes[i], a + 5) <= 1.05:
            first_change_ok += 1
    print(f"    gaps > 5.5 s: {waited}; of them, the pass came within 1.05 s of the first change "
          f"(submission, job end, completing cleared) after (previous + 5 s): {first_change_ok}")
    frac = Counter(round((t % 1.0), 1) for t in bf)
    print("    sub-second phase of pass starts (top):", frac.most_common(4))
    breaks = Counter(g[0].split(" after")[0] for _, g in by["bf_break"])
    print("    how passes ended:", dict(breaks))

    # (2) main scheduler
    main = [(t, g[0]) for t, g in by["main"] if t >= t0]
    full = [t for t, w in main if w == "full queue"]
    dflt = [t for t, w in main if w == "default depth"]
    print(f"\n(2) main scheduler runs: {len(main)} ({len(full)} full queue, {len(dflt)} default depth); "
          f"early returns: {dict(Counter(g[0] for _, g in by['main_skip']))}")
    print("    full-queue gaps:", _hist(_gaps(full), [9.9, 10.1, 10.5, 11.1, 20.1]))
    # what preceded each default-depth run
    subs = sorted(t for t, _ in by["submit"])
    trig = Counter()
    for t in dflt:
        i, j = bisect.bisect_left(subs, t) - 1, bisect.bisect_left(ends, t) - 1
        ds = t - subs[i] if i >= 0 else 1e9
        de = t - ends[j] if j >= 0 else 1e9
        d = min(ds, de)
        trig[("end" if de < ds else "submission") + (" <=1.1 s" if d <= 1.1 else " <=3.1 s" if d <= 3.1 else " later")] += 1
    print("    default-depth runs by the nearest preceding event:", dict(trig))
    rpc = sorted(t for t, _ in by["epilog_rpc"])
    direct = [t for t in dflt if (i := bisect.bisect_right(rpc, t) - 1) >= 0 and t - rpc[i] < 0.05]
    print(f"    job ends through MESSAGE_EPILOG_COMPLETE: {len(rpc)} (each runs schedule() at once: "
          f"{len(direct)} default-depth runs < 50 ms after one); the other ends reach it through "
          f"the terminate agent's queue_job_scheduler() ({len(by['epilog']) - len(rpc)})")
    background = sorted(set(full + dflt) - set(direct))
    after = [b - a for a, b in zip(background, background[1:]) if b in set(dflt)]
    print("    background default-depth runs, time since the previous background run:", _hist(after, [2.0, 2.9, 3.1, 4.1, 10.1]))
    dd = _gaps(sorted(full + dflt))
    print("    gaps between consecutive main runs:", _hist(dd, [1.1, 2.9, 3.1, 5.1, 10.1]))
    # jobs tested per main run (debug3 per-job lines between a run and the next run/pass)
    marks = sorted([(t, "main") for t, _ in main] + [(t, "bf") for t in bf])
    per_run = Counter()
    tested_lines = sorted(t for t, _ in by["main_job"]) + sorted(t for t, _ in by["alloc"])
    for t in tested_lines:
        i = bisect.bisect_right(marks, (t, "~")) - 1
        if i >= 0 and marks[i][1] == "main":
            per_run[marks[i][0]] += 1
    if per_run:
        vals = [per_run.get(t, 0) for t, _ in main]
        print(f"    jobs looked at per main run (reason lines + allocations): median {statistics.median(vals):.0f}, "
              f"max {max(vals)}, runs with none: {sum(1 for v in vals if v == 0)}")
    print("    reasons the main scheduler gave:", dict(Counter(g[1] for _, g in by["main_job"]).most_common(6)))
    print("    'unable to schedule in partition (per _failed_partition())':", len(by["main_failpart"]),
          dict(Counter(g[1] for _, g in by["main_failpart"])))

    # (3) who started each job, and delay after the last job end
    starts = sorted([(t, "main", g[0]) for t, g in by["alloc"]] + [(t, "backfill", g[0]) for t, g in by["bf_start"]])
    print(f"\n(3) starts: main scheduler (sched: Allocate) {len(by['alloc'])}, backfill (Started) {len(by['bf_start'])}")
    # the main scheduler's starts by the kind of run that made them
    runs = sorted([(t, "full queue") for t in full] + [(t, "at once (epilog RPC)") for t in direct]
                  + [(t, "queued event") for t in sorted(set(dflt) - set(direct))])
    kind_of = Counter()
    for t, _ in by["alloc"]:
        i = bisect.bisect_right(runs, (t, "~")) - 1
        kind_of[runs[i][1] if i >= 0 else "?"] += 1
    print("    main-scheduler starts by run:", dict(kind_of))
    after_end = {"main": [], "backfill": []}
    for t, who, _ in starts:
        j = bisect.bisect_left(ends, t) - 1
        if j >= 0:
            after_end[who].append(t - ends[j])
    for who, ds in after_end.items():
        if ds:
            print(f"    {who}: time since the last job end: median {statistics.median(ds):.2f} s; "
                  + _hist(ds, [0.5, 1.1, 2.1, 3.1, 5.1, 10.1, 30.1]))
    # for each job end: delay to the next start (any), when a job was waiting
    nxt = []
    st = [t for t, _, _ in starts]
    for e in ends:
        i = bisect.bisect_left(st, e)
        if i < len(st):
            nxt.append(st[i] - e)
    print(f"    job end -> next start: median {statistics.median(nxt):.2f} s, "
          + _hist(nxt, [0.5, 1.1, 2.1, 3.1, 5.1, 10.1, 30.1]))

    # a start is a true backfill when a job tested before it in the same pass did not start
    passes = backfill_passes(events)
    top = behind = 0
    behind_part = Counter()
    for p in passes:
        blocked: set[str] = set()
        for job, part in p["tested"]:
            if job in p["started"]:
                if not blocked:
                    top += 1
                else:
                    behind += 1
                    behind_part["same partition" if part in blocked else "other partition only"] += 1
            else:
                blocked.add(part)
    print(f"    backfill starts with no unstarted job tested before them in the pass (the main scheduler "
          f"would start them too): {top}; behind a job that did not start: {behind} {dict(behind_part)}")

    # (4) COMPLETING
    end_t = {g[0]: t for t, g in by["end"] + by["timeout"]}
    clean = [t - end_t[g[0]] for t, g in by["cleanup"] if g[0] in end_t]
    if clean:
        print(f"\n(4) COMPLETING (job end -> cleanup_completing): {len(clean)} jobs, median {statistics.median(clean) * 1e3:.0f} ms, "
              f"max {max(clean) * 1e3:.0f} ms")
    return None


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("log")
    parser.add_argument("--excerpt")
    args = parser.parse_args()
    if args.excerpt:
        print("kept", write_excerpt(Path(args.log), Path(args.excerpt)), "lines")
    facts(read_events(Path(args.log)))


if __name__ == "__main__":
    main()
