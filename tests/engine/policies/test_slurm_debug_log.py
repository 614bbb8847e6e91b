"""What slurmctld's own log says about when Slurm 22.05's schedulers run and what they start
(tests/data/slurm_replay_debug: a re-run of tests/data/slurm_replay's workload with debug logging,
README there), checked against the parameters the ``slurm`` policy reads from the same slurm.conf.

The log excerpt is read with scripts/slurm_log_facts.py (the script that wrote it)."""

from __future__ import annotations

import bisect
import csv
import statistics
import sys
from pathlib import Path

import pytest

from engine.platform.slurmconf import read_slurm_conf
from engine.policies import slurmkernels as kernels

ROOT = Path(__file__).resolve().parents[3]
DATA = ROOT / "tests" / "data" / "slurm_replay_debug"
sys.path.insert(0, str(ROOT / "scripts"))
from slurm_log_facts import backfill_passes, read_events  # noqa: E402  (scripts/ is not a package)

#: slurmctld's batch_sched_delay default (controller.c; the site does not set it)
BATCH_SCHED_DELAY = 3


@pytest.fixture(scope="module")
def log():
    events = read_events(DATA / "slurmctld_sched.log.gz")
    first = min(t for t, kind, _ in events if kind == "submit")
    return [e for e in events if e[0] >= first]


@pytest.fixture(scope="module")
def site():
    return read_slurm_conf(DATA / "slurm.conf").scheduler


def times(events, *kinds, what=None):
    return sorted(t for t, kind, g in events if kind in kinds and (what is None or g[0] == what))


def test_backfill_passes_are_bf_interval_apart_and_wait_only_for_a_change(log, site):
    """backfill.c: the thread sleeps bf_interval after a pass, then looks every second until
    something changed (_more_work). Passes are never closer than bf_interval; while jobs wait they
    are bf_interval apart (not sched_interval); a longer gap ends within a second of the first
    submission or job end after it could have run."""
    interval = site["bf_interval"]
    last_start = max(times(log, "bf_start", "alloc"))
    passes = [t for t in times(log, "bf_begin") if t <= last_start]      # while jobs were waiting
    gaps = [b - a for a, b in zip(passes, passes[1:])]
    assert len(passes) > 700
    assert min(gaps) >= interval - 0.01
    assert statistics.median(gaps) == pytest.approx(interval, abs=0.01)
    on_interval = sum(1 for g in gaps if g < interval + 0.1)
    assert on_interval / len(gaps) > 0.98
    changes = times(log, "submit", "end", "timeout")
    for a, b in zip(passes, passes[1:]):
        if b - a < interval + 1.05:
            continue
        i = bisect.bisect_left(changes, a)
        assert i < len(changes) and changes[i] < b, f"a {b - a:.1f} s gap with no change before the pass at {b}"
        assert b - max(changes[i], a + interval) <= 1.05


def test_the_main_scheduler_runs_every_sched_interval_and_after_events(log, site):
    """controller.c: the full queue every sched_interval; a submission or a job end queues a
    request, run at the background thread's next 1-s tick once batch_sched_delay whole seconds
    have passed since its last run. proc_req.c: a MESSAGE_EPILOG_COMPLETE (a job end that slurmd
    reports itself, not as its answer to the terminate request) runs the scheduler at once."""
    full = times(log, "main", what="full queue")
    gaps = [b - a for a, b in zip(full, full[1:])]
    assert statistics.median(gaps) == pytest.approx(site["sched_interval"], abs=0.05)
    assert sum(1 for g in gaps if abs(g - site["sched_interval"]) < 0.2) / len(gaps) > 0.95
    event_runs = times(log, "main", what="default depth")
    rpc = times(log, "epilog_rpc")
    direct = {t for t in event_runs if (i := bisect.bisect_right(rpc, t) - 1) >= 0 and t - rpc[i] < 0.05}
    assert len(rpc) >= 20 and len(direct) == len(rpc)
    background = sorted(set(full) | set(event_runs) - direct)
    queued = set(event_runs) - direct
    for a, b in zip(background, background[1:]):
        if b in queued:
            assert b - a > BATCH_SCHED_DELAY - 1, "a queued run within batch_sched_delay whole seconds of the last"
    events = times(log, "submit", "end", "timeout")
    after = [t - events[bisect.bisect_left(events, t) - 1] for t in queued]
    assert max(after) < BATCH_SCHED_DELAY + 1.2


def test_the_main_scheduler_starts_nothing_after_the_first_job_that_does_not_fit(log):
    """job_scheduler.c: a job refused for Resources fails its partition and takes its nodes out
    of the pass; both partitions are the one node, so nothing else starts in that run."""
    runs: list[list[str]] = []
    for _, kind, g in log:
        if kind == "main":
            runs.append([])
        elif kind == "bf_begin":
            runs.append([])           # a backfill pass's lines are not the main scheduler's
        elif runs and kind == "alloc":
            runs[-1].append("A")
        elif runs and kind == "main_job" and g[1] == "Resources":
            runs[-1].append("R")
    assert sum(r.count("A") for r in runs) >= 80
    assert not [r for r in runs if "R" in r and "A" in r[r.index("R"):]]


def _free(at: int, now: int, running: list[tuple[int, int]], reserved: list[tuple[int, int, int]],
          capacity: int) -> int:
    """Processors free at ``at``: all running jobs hold theirs now, later those expected to end
    after ``at``; reservations hold theirs over [begin, end)."""
    busy = sum(n for stop, n in running if at == now or stop > at)
    return capacity - busy - sum(n for begin, stop, n in reserved if begin <= at < stop)


def _decisions(log, jobs, capacity, resolution, per_node):
    """Replays each backfill pass's decisions from the log: running jobs from its starts and ends
    (expected to end at start + limit), each job's processors and limit from submitted.tsv, the
    pass's order and Slurm's own planned start S for each job it did not start, reserved over
    [S, S + limit] rounded down to bf_resolution, taking what the ``slurm`` policy's reservations
    take (slurmkernels.reserved_size: whole nodes of ``per_node`` CPUs). A job starts iff its
    processors are free from now to now + limit."""
    start, end = {}, {}
    for t, kind, g in log:
        if kind in ("bf_start", "alloc"):
            start[g[0]] = t
        elif kind in ("end", "timeout"):
            end[g[0]] = t
    agree = disagree = 0
    for p in backfill_passes(log):
        t, now = p["t"], int(p["t"])
        running = [(int(start[j]) + jobs[j][1], jobs[j][0]) for j in start
                   if start[j] < t and end.get(j, float("inf")) > t and j not in p["started"]]
        reserved: list[tuple[int, int, int]] = []
        for j, _ in p["tested"]:
            if j in p["passed"]:        # bf_max_job_user or a limit: not a decision of the table
                continue
            cpus, limit = jobs[j]
            points = [now] + [begin for begin, _, _ in reserved if now < begin < now + limit]
            fits = all(_free(at, now, running, reserved, capacity) >= cpus for at in points)
            started = j in p["started"]
            agree += fits == started
            disagree += fits != started
            if started:
                running.append((now + limit, cpus))
            elif j in p["planned"]:
                s = p["planned"][j]
                reserved.append((s // resolution * resolution, (s + limit) // resolution * resolution,
                                 int(kernels.reserved_size(cpus, per_node, capacity))))
    return agree, disagree


def test_backfill_starts_as_the_policys_whole_node_reservations_decide(log, site):
    """Every backfill decision in the log (start now or not) is the one whole-node reservations
    give (the ``slurm`` policy's default); reservations of processors only
    (``--set whole_node_reservations=false``) would decide otherwise."""
    conf = read_slurm_conf(DATA / "slurm.conf")
    with open(DATA / "submitted.tsv") as f:
        jobs = {r["jobid"]: (int(r["cpus"]), 60 * int(r["limit"])) for r in csv.DictReader(f, delimiter="\t")}
    per_node = min(n.cpus for n in conf.nodes)
    agree, disagree = _decisions(log, jobs, conf.total_cpus, site["bf_resolution"], per_node)
    assert agree > 20000 and disagree == 0
    _, disagree_cpus = _decisions(log, jobs, conf.total_cpus, site["bf_resolution"], 1)
    assert disagree_cpus > 100


def test_jobs_over_their_time_limit_are_killed_at_the_next_30_s_check_not_at_the_limit(log):
    """slurmctld's background loop tests time limits every PERIODIC_TIMEOUT = 30 s (controller.c
    _slurmctld_background: ``difftime(now, last_timelimit_time) >= PERIODIC_TIMEOUT``, its clock
    set when the loop starts) and kills a job whose end_time has passed (job_mgr.c job_time_limit,
    OverTimeLimit 0: "Time limit exhausted"). So the 4 jobs of this run that reached their limit
    held their CPUs 9-19 s past it (sacct's Elapsed), killed on one 30-s grid, in phase with the
    priority calculations (slurmctld's start + k x 60 s, 44 s after the first submission): the
    replays keep those runtimes (--overrun run) instead of cutting them at the limit."""
    with (DATA / "sacct.txt").open() as f:
        rows = {r["JobIDRaw"]: r for r in csv.DictReader(f, delimiter="|")}
    kills = [(t, g[0]) for t, kind, g in log if kind == "timeout"]
    assert sorted(j for _, j in kills) == sorted(j for j, r in rows.items() if r["State"] == "TIMEOUT")
    first = min(t for t, kind, _ in log if kind == "submit")
    overruns = []
    for t, job in kills:
        r = rows[job]
        h, m, s = (int(x) for x in r["Timelimit"].split(":"))
        h2, m2, s2 = (int(x) for x in r["Elapsed"].split(":"))
        overruns.append((h2 * 3600 + m2 * 60 + s2) - (h * 3600 + m * 60 + s))
        assert (t - first - 44) % 30 == pytest.approx(0, abs=1) or (t - first - 44) % 30 == pytest.approx(30, abs=1)
    assert sorted(overruns) == [9, 17, 19, 19]        # each less than the 30 s between two checks


def test_a_backfill_pass_mostly_comes_before_the_job_ends_of_its_second(log):
    """The replay's seconds are sacct's. Of the wall seconds holding both a backfill pass and a job
    end, the pass came first in 91 of 108: the thread keeps its phase in the second (bf_interval
    after the previous pass), and a job it started ends its whole-second runtime plus some 50 ms
    later, after the pass that many seconds on. So a replayed pass does not see the ends of its own
    second (SlurmBackfill.backfill_pass, ``ends_after_backfill``)."""
    passes = times(log, "bf_begin")
    before = after = 0
    for end in times(log, "end", "timeout"):
        second = int(end)
        k = bisect.bisect_left(passes, second)
        while k < len(passes) and passes[k] < second + 1:
            before, after = (before + 1, after) if passes[k] < end else (before, after + 1)
            k += 1
    assert (before, after) == (91, 17)
