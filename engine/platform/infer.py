"""The current configuration, inferred from a trace's recorded schedule.

A trace that records when each job started (the SWF wait field; PBS S records; sacct Start) and
which queue it was in tells a lot about the configuration it ran under, and an admin's "current"
should start from that rather than from a blank page. For every queue the trace names:

* ``walltime``: the largest request, rounded up to a usual value (1h, 2h, 4h, ..., 1d, 2d, ..., 1w,
  2w, 30d);
* ``max_cores``: the most cores its jobs held at once in the recorded schedule;
* ``user_max_jobs`` / ``user_max_cores``: the most running jobs / cores one user held at once in it;
* ``pool``: the clusters its jobs ran on (from the allocated hosts the trace records).

Each value is what the recording shows, so it is a lower bound of the real limit (the queue may
never have been full); every value is written with its evidence as a YAML comment ("1,279 cores
running at once on 2013-02-14 10:00"). Priorities leave no trace in a schedule: the inferred
configuration is ``mode: virtual`` (one fair-share queue; queues only limit), and says so.

A machine description is inferred from the allocated hosts when none is given: hosts grouped into
clusters (by the cluster rules of the jobs that ran there, ``cl_zewura``, or by the host name,
``torque2`` -> ``torque``), nodes = hosts seen, cores per node = the most cores a host held at once,
RAM = the largest per-node request that ran there. Hosts never used are invisible, so the inferred
machine can be smaller than the real one.

Times are shown in the trace's time zone (``TimeZoneString`` of the header) when it names one, else
UTC. Jobs without a recorded start are left out and counted. Runtimes are the workload's (cut at
the requested time where cleaning killed a job).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import numpy as np
import pandas as pd

from engine.platform.hosts import host_cluster
from engine.platform.machines import Cluster, Machine
from engine.platform.queues import QueueConfig, parse_queue_config, yaml_name
from engine.workload.metacentrum import EXEC_HOSTS
from engine.workload.model import Workload
from engine.workload.recorded import REJECT_NO_START, recorded_starts

#: usual walltime limits, in seconds, with how they are written
USUAL_WALLTIMES = [(h * 3600, f"{h}h") for h in (1, 2, 4, 6, 8, 12)] + \
    [(d * 86400, f"{d}d") for d in (1, 2, 3, 4, 5)] + [(w * 7 * 86400, f"{w}w") for w in (1, 2, 3)] + \
    [(d * 86400, f"{d}d") for d in (30, 60, 90, 180, 365)]
NO_START = REJECT_NO_START


@dataclass(frozen=True)
class Evidence:
    """A value and the sentence that justifies it."""

    value: Any
    why: str


@dataclass
class InferredQueue:
    name: str
    jobs: int
    walltime: Evidence
    max_cores: Evidence
    user_max_jobs: Evidence
    user_max_cores: Evidence
    pool: Evidence | None = None


@dataclass
class InferredConfiguration:
    """What :func:`infer` found: queues, the clusters hosts belong to, a machine if none was given."""

    queues: list[InferredQueue]
    source: str
    jobs: int
    left_out: dict[str, int]
    time_zone: str
    span: tuple[str, str]
    machine: Machine | None = None
    machine_evidence: dict[str, dict[str, str]] = field(default_factory=dict)
    host_clusters: dict[str, str] = field(default_factory=dict)

    def queue_config(self) -> QueueConfig:
        """The configuration as the engine reads it (from :meth:`queues_yaml`, so both agree)."""
        return parse_queue_config(self.queues_yaml(), source=f"inferred from {self.source}")

    def queues_yaml(self) -> str:
        return queues_yaml(self)

    def machine_yaml(self) -> str:
        if self.machine is None:
            raise ValueError("a machine description was given, none was inferred")
        return machine_yaml(self.machine, self.machine_evidence, self)


# --------------------------------------------------------------------------- recorded schedule


def recorded_jobs(workload: Workload) -> tuple[pd.DataFrame, int]:
    """Jobs with a recorded start: submit, start, end, cores, user, queue name, hosts; and how many
    had none."""
    jobs = workload.jobs
    start = recorded_starts(workload)
    known = start >= 0
    cores = (jobs["nodes"] * jobs["ppn"]).to_numpy(np.int64) if "nodes" in jobs and "ppn" in jobs \
        else jobs["procs"].to_numpy(np.int64)
    cores = np.where(cores > 0, cores, jobs["procs"].to_numpy(np.int64))
    frame = pd.DataFrame({
        "submit": jobs["submit"].to_numpy(np.int64), "start": start,
        "end": start + jobs["runtime"].to_numpy(np.int64), "cores": cores,
        "user": jobs["user"].to_numpy(np.int64) if "user" in jobs else -1,
        "nodes": jobs["nodes"].to_numpy(np.int64) if "nodes" in jobs else 0,
        "ppn": jobs["ppn"].to_numpy(np.int64) if "ppn" in jobs else 0,
        "queue": _queue_names(jobs),
        "requested_time": jobs["requested_time"].to_numpy(np.int64),
        "hosts": jobs[EXEC_HOSTS].astype(str).to_numpy() if EXEC_HOSTS in jobs else "",
        "rule_clusters": jobs["clusters"].astype(str).to_numpy() if "clusters" in jobs else "",
        "rule_hosts": jobs["hosts"].astype(str).to_numpy() if "hosts" in jobs else "",
        "mem": jobs["mem"].to_numpy(np.int64) if "mem" in jobs else 0,
        "gpus": jobs["gpus"].to_numpy(np.int64) if "gpus" in jobs else 0,
    })
    return frame.loc[known].reset_index(drop=True), int((~known).sum())


def _queue_names(jobs: pd.DataFrame) -> np.ndarray:
    if "queue_name" in jobs:
        return jobs["queue_name"].astype(str).to_numpy()
    return jobs["queue"].astype(str).to_numpy()


def peak(start: np.ndarray, end: np.ndarray, amount: np.ndarray) -> tuple[int, int]:
    """(the most of ``amount`` held at once, the first time it was held); a job ending at t is gone
    before one starting at t arrives."""
    if len(start) == 0:
        return 0, 0
    times = np.concatenate([start, end])
    deltas = np.concatenate([amount, -amount])
    order = np.lexsort((deltas, times))          # by time, ends (negative) first
    level = np.cumsum(deltas[order])
    best = int(np.argmax(level))
    return int(level[best]), int(times[order][best])


def peak_per_group(frame: pd.DataFrame, key: str, amount: np.ndarray) -> tuple[int, int, Any]:
    """(most held at once by one value of ``key``, when, which value)."""
    best = (0, 0, None)
    for value, rows in frame.groupby(key, sort=True).indices.items():
        held, when = peak(frame["start"].to_numpy()[rows], frame["end"].to_numpy()[rows], amount[rows])
        if held > best[0]:
            best = (held, when, value)
    return best


# --------------------------------------------------------------------------- hosts and clusters


def host_usage(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per (job, host it ran on): job index, host, cores on that host. The trace records
    hosts, not cores per host: a job on as many hosts as the nodes it asked for holds its ppn on
    each; otherwise its cores are shared evenly, rounded down (at least 1)."""
    rows, hosts, cores = [], [], []
    for i, (text, total, nodes, ppn) in enumerate(zip(frame["hosts"].tolist(), frame["cores"].tolist(),
                                                      frame["nodes"].tolist(), frame["ppn"].tolist())):
        names = [h for h in str(text).split(";") if h]
        each = ppn if nodes == len(names) and ppn > 0 else max(int(total) // max(len(names), 1), 1)
        for host in names:
            rows.append(i)
            hosts.append(host)
            cores.append(each)
    return pd.DataFrame({"job": np.asarray(rows, dtype=np.int64), "host": hosts,
                         "cores": np.asarray(cores, dtype=np.int64)})


def host_peaks(frame: pd.DataFrame, usage: pd.DataFrame) -> dict[str, tuple[int, int]]:
    """Per host: (the most cores it held at once, when)."""
    start, end = frame["start"].to_numpy(), frame["end"].to_numpy()
    jobs, cores = usage["job"].to_numpy(), usage["cores"].to_numpy()
    return {host: peak(start[jobs[rows]], end[jobs[rows]], cores[rows])
            for host, rows in usage.groupby("host").indices.items()}


def assign_hosts(frame: pd.DataFrame, usage: pd.DataFrame, machine: Machine | None,
                 peaks: dict[str, tuple[int, int]]) -> dict[str, str]:
    """Each host's cluster: the cluster its name says (``zewura12``, ``torque2``), else the one the
    cluster rules of the jobs that ran on it name most often (``cl_zegox``); else, with a machine,
    the smallest cluster whose nodes have the cores it held at once; without one, the only cluster
    found so far whose hosts held as many cores, else ``cluster-<cores>``."""
    names = {c.name for c in machine.clusters} if machine is not None else set()
    hints: dict[str, dict[str, int]] = {}
    rules = frame["rule_clusters"].to_numpy()
    wanted_hosts = frame["rule_hosts"].to_numpy()
    for job, host in zip(usage["job"].tolist(), usage["host"].tolist()):
        votes = hints.setdefault(host, {})
        named = [c for c in str(rules[job]).split(";") if c]
        named += [host_cluster(h) for h in str(wanted_hosts[job]).split(";") if h]
        for cluster in named:
            votes[cluster] = votes.get(cluster, 0) + 1
    most = {host: held for host, (held, _) in peaks.items()}
    result: dict[str, str] = {}
    unhinted = []
    for host in sorted(most, key=_natural):
        by_name = host_cluster(host) if not host.isdigit() else None
        votes = hints.get(host, {})
        if by_name and (not names or by_name in names):
            result[host] = by_name
        elif votes and (not names or any(v in names for v in votes)):
            usable = {k: v for k, v in votes.items() if not names or k in names}
            result[host] = max(sorted(usable), key=lambda k: usable[k])
        elif machine is not None:
            fitting = sorted((c for c in machine.clusters if c.cores >= most[host]), key=lambda c: c.cores)
            result[host] = fitting[0].name if fitting else machine.clusters[0].name
        else:
            unhinted.append(host)
    for host in unhinted:
        alike = sorted({c for h, c in result.items() if most[h] == most[host] and h not in unhinted})
        result[host] = alike[0] if len(alike) == 1 else f"cluster-{most[host]}"
    return dict(sorted(result.items(), key=lambda item: _natural(item[0])))


def _natural(text: str) -> tuple:
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", text))


def infer_machine(frame: pd.DataFrame, usage: pd.DataFrame, clusters_of: dict[str, str],
                  per_host: dict[str, tuple[int, int]], zone: tzinfo) -> tuple[Machine, dict[str, dict[str, str]]]:
    """Clusters from the hosts jobs ran on (see the module docstring), with evidence per value."""
    clusters, evidence = [], {}
    for name in dict.fromkeys(clusters_of[h] for h in sorted(clusters_of, key=_natural)):
        hosts = [h for h in sorted(clusters_of, key=_natural) if clusters_of[h] == name]
        busiest = max(hosts, key=lambda h: per_host[h][0])
        cores, when = per_host[busiest]
        jobs = usage.loc[usage["host"].isin(hosts), "job"].unique()
        mem = int(frame["mem"].to_numpy()[jobs].max()) if len(jobs) else 0
        gpus = int(frame["gpus"].to_numpy()[jobs].max()) if len(jobs) else 0
        clusters.append(Cluster(name, len(hosts), max(cores, 1), mem, gpus))
        shown = ", ".join(hosts[:4]) + (f", ... ({len(hosts)} hosts)" if len(hosts) > 4 else "")
        evidence[name] = {
            "nodes": f"hosts seen: {shown}",
            "cores": f"host {busiest} ran {_count(cores, 'core')} at once on {when_text(when, zone)}",
            "ram": "the largest per-node memory request that ran here" if mem else "no memory requests recorded",
        }
    return Machine(tuple(clusters), source="inferred from the allocated hosts", format="yaml"), evidence


# --------------------------------------------------------------------------- queues


def round_walltime(seconds: int) -> tuple[int, str]:
    """The smallest usual walltime limit at least ``seconds`` (beyond a year: whole days)."""
    for limit, text in USUAL_WALLTIMES:
        if seconds <= limit:
            return limit, text
    days = math.ceil(seconds / 86400)
    return days * 86400, f"{days}d"


def duration_text(seconds: int) -> str:
    """``5d 02:03:04`` / ``02:00:00``."""
    days, rest = divmod(int(seconds), 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    clock = f"{hours:02d}:{minutes:02d}:{secs:02d}"
    return f"{days}d {clock}" if days else clock


def time_zone(workload: Workload) -> tuple[tzinfo, str]:
    """The trace's time zone and its name: the header's ``TimeZoneString`` (``Europe/Prague``,
    ``UTC+01:00``), else its ``TimeZone`` offset in seconds, else UTC."""
    name = str(workload.metadata.get("TimeZoneString", "") or "").strip()
    zone = zone_named(name) if name else None
    if zone is not None:
        return zone, name
    offset = str(workload.metadata.get("TimeZone", "") or "").strip()
    if re.fullmatch(r"[+-]?\d+", offset) and int(offset):
        return timezone(timedelta(seconds=int(offset))), offset_name(int(offset))
    return UTC, "UTC"


def zone_named(name: str) -> tzinfo | None:
    """An IANA zone (``Europe/Prague``) or a fixed offset (``UTC+01:00``); None if neither."""
    match = re.fullmatch(r"UTC([+-])(\d\d):(\d\d)", name)
    if match:
        sign = 1 if match.group(1) == "+" else -1
        return timezone(sign * timedelta(hours=int(match.group(2)), minutes=int(match.group(3))))
    if name == "UTC":
        return UTC
    try:
        return ZoneInfo(name)
    except (KeyError, ValueError, OSError):
        return None


def offset_name(seconds: int) -> str:
    """``UTC+01:00`` for 3600."""
    sign = "+" if seconds >= 0 else "-"
    hours, minutes = divmod(abs(seconds) // 60, 60)
    return f"UTC{sign}{hours:02d}:{minutes:02d}"


def when_text(epoch: int, zone: tzinfo) -> str:
    """A time in the trace's time base as a calendar date (absolute epochs assumed)."""
    return datetime.fromtimestamp(int(epoch), zone).strftime("%Y-%m-%d %H:%M")


def infer(workload: Workload, machine: Machine | None = None) -> InferredConfiguration:
    """Queues (and, without ``machine``, a machine description) from the recorded schedule."""
    zone, zone_name = time_zone(workload)
    frame, no_start = recorded_jobs(workload)
    usage = host_usage(frame)
    peaks = host_peaks(frame, usage) if len(usage) else {}
    clusters_of = assign_hosts(frame, usage, machine, peaks) if len(usage) else {}
    inferred_machine: Machine | None = None
    machine_evidence: dict[str, dict[str, str]] = {}
    if machine is None and clusters_of:
        inferred_machine, machine_evidence = infer_machine(frame, usage, clusters_of, peaks, zone)
    job_clusters = _job_clusters(frame, usage, clusters_of)
    given: Any = workload.metadata.get("user_names") or {}
    names = {int(k): str(v) for k, v in given.items()} if isinstance(given, dict) else {}
    queues = [_infer_queue(name, frame.loc[rows].reset_index(drop=True), job_clusters[rows], zone, names)
              for name, rows in sorted(frame.groupby("queue").indices.items())]
    span = (when_text(frame["submit"].min(), zone), when_text(frame["submit"].max(), zone)) if len(frame) else ("", "")
    left_out = {NO_START: no_start} if no_start else {}
    source = Path(str(workload.source)).name if workload.source else "the trace"
    return InferredConfiguration(queues, source, len(frame), left_out, zone_name,
                                 span, inferred_machine, machine_evidence, clusters_of)


def _job_clusters(frame: pd.DataFrame, usage: pd.DataFrame, clusters_of: dict[str, str]) -> np.ndarray:
    """Per job, the cluster(s) it ran on, ``;``-joined ("" when the trace records no hosts)."""
    ran = [""] * len(frame)
    if len(usage):
        pairs = pd.DataFrame({"job": usage["job"], "cluster": usage["host"].map(clusters_of)}).drop_duplicates()
        for job, group in pairs.groupby("job")["cluster"]:
            ran[int(job)] = ";".join(group)
    return np.asarray(ran, dtype=object)


def _infer_queue(name: str, jobs: pd.DataFrame, ran_on: np.ndarray, zone: tzinfo,
                 user_names: dict[int, str]) -> InferredQueue:
    count = len(jobs)
    largest = int(jobs["requested_time"].max())
    _, text = round_walltime(largest)
    walltime = Evidence(text, f"largest request {duration_text(largest)} ({_count(count, 'job')})")
    start, end = jobs["start"].to_numpy(), jobs["end"].to_numpy()
    cores = jobs["cores"].to_numpy()
    held, when = peak(start, end, cores)
    max_cores = Evidence(held, f"{_count(held, 'core')} running at once on {when_text(when, zone)}")
    n_jobs, when_j, user_j = peak_per_group(jobs, "user", np.ones(count, dtype=np.int64))
    n_cores, when_c, user_c = peak_per_group(jobs, "user", cores)
    user_j, user_c = (user_names.get(int(u), u) if u is not None else u for u in (user_j, user_c))
    user_jobs = Evidence(n_jobs, f"user {user_j} ran {_count(n_jobs, 'job')} at once on {when_text(when_j, zone)}")
    user_cores = Evidence(n_cores, f"user {user_c} held {_count(n_cores, 'core')} at once on {when_text(when_c, zone)}")
    pool = None
    counts: dict[str, int] = {}
    for text_ in ran_on.tolist():
        for cluster in filter(None, text_.split(";")):
            counts[cluster] = counts.get(cluster, 0) + 1
    if counts:
        order = sorted(counts, key=lambda c: (-counts[c], c))
        pool = Evidence(order, "its jobs ran on " + ", ".join(f"{c} ({_count(counts[c], 'job')})" for c in order))
    return InferredQueue(name, count, walltime, max_cores, user_jobs, user_cores, pool)


# --------------------------------------------------------------------------- YAML with evidence


def queues_yaml(config: InferredConfiguration) -> str:
    """The queue configuration (engine.platform.queues YAML), each value commented with its evidence."""
    lines = [
        f"# Inferred from {config.source} by `python -m engine infer`: {config.jobs:,} jobs with a recorded",
        f"# start, submitted {config.span[0]} .. {config.span[1]} ({config.time_zone}).",
    ]
    for reason, count in config.left_out.items():
        lines.append(f"# {_count(count, 'job')} left out: {reason}.")
    lines += [
        "# Limits are the most the recorded schedule ever held, so the real limits were at least these.",
        "# A schedule does not show queue priorities: mode virtual (one fair-share queue; queues only limit).",
        f"description: inferred from {_plain(config.source)}",
        "mode: virtual",
        "queues:",
    ]
    for queue in config.queues:
        lines.append(f"  - name: {yaml_name(queue.name)}")
        lines.append(_commented(f"    walltime: {queue.walltime.value}", queue.walltime.why))
        for key in ("max_cores", "user_max_jobs", "user_max_cores"):
            evidence = getattr(queue, key)
            if evidence.value >= 1:
                lines.append(_commented(f"    {key}: {evidence.value}", evidence.why))
        if queue.pool is not None:
            lines.append(_commented(f"    pool: [{', '.join(yaml_name(c) for c in queue.pool.value)}]", queue.pool.why))
    return "\n".join(lines) + "\n"


def machine_yaml(machine: Machine, evidence: dict[str, dict[str, str]], config: InferredConfiguration) -> str:
    """The inferred machine description (our YAML), each value commented with its evidence."""
    lines = [f"# Inferred from the hosts the jobs of {config.source} ran on (`python -m engine infer`).",
             "# Hosts no job used are not seen: the real clusters may have more nodes.",
             "clusters:"]
    for cluster in machine.clusters:
        why = evidence.get(cluster.name, {})
        lines.append(f"  - name: {yaml_name(cluster.name)}")
        lines.append(_commented(f"    nodes: {cluster.nodes}", why.get("nodes", "")))
        lines.append(_commented(f"    cores: {cluster.cores}", why.get("cores", "")))
        if cluster.ram_kb:
            lines.append(_commented(f"    ram: {cluster.ram_kb / 1024 ** 2:.1f} GiB", why.get("ram", "")))
        if cluster.gpus:
            lines.append(f"    gpus: {cluster.gpus}")
    return "\n".join(lines) + "\n"


def _commented(line: str, why: str) -> str:
    return f"{line + '  ':<34}# {why}" if why else line


def _count(number: int, noun: str) -> str:
    """``1 job`` / ``1,279 jobs``."""
    return f"{number:,} {noun}" if number == 1 else f"{number:,} {noun}s"


def _plain(text: str) -> str:
    return re.sub(r"[^\w./ -]", "_", text)


def clusters_seen(workload: Workload) -> dict[str, Any] | None:
    """The clusters a trace's jobs ran on, as the trace page names them: each cluster's hosts seen and
    the most cores one of them ran at once, and their total (a lower bound: hosts no job used are not
    seen); None when the trace records no hosts or no starts."""
    frame, _ = recorded_jobs(workload)
    usage = host_usage(frame)
    if not len(usage):
        return None
    peaks = host_peaks(frame, usage)
    clusters_of = assign_hosts(frame, usage, None, peaks)
    if not clusters_of:
        return None
    machine, _ = infer_machine(frame, usage, clusters_of, peaks, time_zone(workload)[0])
    return {"clusters": [{"name": c.name, "nodes": c.nodes, "cores": c.cores, "total": c.total_cores}
                         for c in machine.clusters],
            "cores": machine.cores}
