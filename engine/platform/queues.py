"""Queue configurations: walltime limits, priorities, core limits, per-user limits, resource pools.

A configuration is YAML (documented in the README; the shipped ones are in ``configs/`` and are
addressable by name: ``metacentrum-historical``, ``metacentrum-2014``)::

    mode: priority          # priority: queues traversed by priority (highest first), fair-share inside
                            # virtual: one queue ordered by fair-share; queues only limit and give walltime
    queues:
      - name: long
        walltime: 30d       # maximum walltime: seconds or a number with s, m, h, d, w
        priority: 70
        max_cores: 1440     # cores the queue's running jobs may hold together (omit: no limit)
        max_share: 0.5      # the same as a fraction of the machine's cores (the smaller limit wins)
        user_max_jobs: 70   # running jobs of one user in this queue
        user_max_cores: 500 # cores of one user's running jobs in this queue
        pool: [zewura]      # clusters the queue's jobs may use (omit: all)
        single_node: false  # only jobs on one node
        job_max_cores: 256  # cores one job may ask for (PBS resources_max.ncpus; omit: no limit)
        job_max_mem: 500 GB # memory one job may ask for in total (PBS resources_max.mem; a plain number is KB)
        route_to: [extra]   # a job this queue refuses goes to the first of these that accepts it

A job whose queue the configuration lacks (or a multi-node job in a single-node queue) goes to
the queue with the smallest walltime that is at least the job's requested time (single-node
queues only for single-node jobs); if none is long enough, to the longest queue. Every such move is
counted by (from, to) and reported; no job is dropped.

**Admission** (as PBS and Slurm do at submission; engine.sim.admission does it): a queue refuses
a job that asks for more than its walltime, more cores than ``job_max_cores``, than the queue's
core limit (``max_cores``/``max_share``: the job could never start there) or than
``user_max_cores``, more memory than ``job_max_mem``, or that no cluster of its ``pool`` can run.
A refused job goes to the first queue of ``route_to`` that accepts it (destinations' own
``route_to`` followed in turn, each queue tried once, depth first: PBS's route queues); with no
such queue it is rejected at submission, counted and listed with the reason. A queue with
``route_to`` may omit ``walltime``: it is then a pure routing queue (it runs no job itself).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Literal

import numpy as np

from engine.platform.machines import parse_size_kb
from engine.platform.yaml_text import key_lines, key_name, load_yaml, sequence_items
from engine.workload.errors import WorkloadError, shown
from engine.workload.numbers import MAX_MAGNITUDE

Mode = Literal["priority", "virtual"]
CONFIG_DIR = Path(__file__).with_name("configs")
#: shipped configurations, by the name the command line and the web use
SHIPPED = {"metacentrum-historical": "historical.yaml", "metacentrum-2014": "2014.yaml"}
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw]?)\s*$", re.IGNORECASE)
_SECONDS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_KEYS = {"name", "walltime", "priority", "max_cores", "max_share", "user_max_jobs", "user_max_cores", "pool",
         "single_node", "description", "job_max_cores", "job_max_mem", "route_to"}


@dataclass(frozen=True)
class Queue:
    name: str
    walltime: int
    priority: int = 0
    max_cores: int | None = None
    max_share: float | None = None
    user_max_jobs: int | None = None
    user_max_cores: int | None = None
    pool: tuple[str, ...] | None = None
    single_node: bool = False
    job_max_cores: int | None = None
    job_max_mem: int | None = None          # KB, a job's total
    route_to: tuple[str, ...] = ()

    @property
    def routing_only(self) -> bool:
        """A pure routing queue (no walltime given): it runs no job, it only routes them."""
        return self.walltime == 0

    def core_limit(self, machine_cores: int) -> float:
        """Cores the queue's running jobs may hold together on a machine of ``machine_cores``."""
        limits = [math.inf]
        if self.max_cores is not None:
            limits.append(self.max_cores)
        if self.max_share is not None:
            limits.append(math.floor(self.max_share * machine_cores))
        return min(limits)


@dataclass(frozen=True)
class QueueConfig:
    queues: tuple[Queue, ...]
    mode: Mode = "priority"
    source: str = ""
    name: str = ""

    def index(self, name: str) -> int | None:
        for i, queue in enumerate(self.queues):
            if queue.name == name:
                return i
        return None

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "source": self.source, "mode": self.mode,
                "queues": [q.__dict__ | {"pool": list(q.pool) if q.pool else None, "route_to": list(q.route_to)}
                           for q in self.queues]}


@dataclass
class Assignment:
    """Which configured queue each job runs in, and the moves made to get there."""

    queue: np.ndarray                       # index into config.queues, per job
    moved: dict[str, int] = field(default_factory=dict)   # "from -> to" -> jobs
    over_walltime: int = 0                  # jobs whose request exceeds their queue's walltime (before admission)

    @property
    def moved_total(self) -> int:
        return sum(self.moved.values())


# --------------------------------------------------------------------------- reading


def load_queue_config(name_or_path: str | Path) -> QueueConfig:
    """A shipped configuration by name (``metacentrum-2014``) or a YAML file by path."""
    key = str(name_or_path)
    if key in SHIPPED:
        config = parse_queue_config(shipped_text(key), source=str(CONFIG_DIR / SHIPPED[key]))
        return QueueConfig(config.queues, config.mode, config.source, key)
    path = Path(name_or_path)
    if not path.exists():
        raise WorkloadError(f"no such queue configuration (a file, or one of {', '.join(SHIPPED)})", file=key)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise WorkloadError(f"cannot read the queue configuration: {exc}", file=key) from None
    config = parse_queue_config(text, source=key)
    return QueueConfig(config.queues, config.mode, config.source, path.stem)


def shipped_text(name: str) -> str:
    """The YAML text of a shipped configuration (``metacentrum-2014``)."""
    return (CONFIG_DIR / SHIPPED[name]).read_text(encoding="utf-8")


def parse_queue_config(text: str, *, source: str = "<queues>") -> QueueConfig:
    """Parse and validate the YAML; errors name the file, line and field."""
    data, root = load_yaml(text, source)
    if not isinstance(data, dict):
        raise WorkloadError("expected a mapping with 'mode' and 'queues'", file=source, line=1, field="queues")
    top_lines = key_lines(root)
    unknown = sorted(key_name(key) for key in data if key not in ("mode", "queues", "description"))
    if unknown:
        raise WorkloadError(f"unknown key {unknown[0]!r} (keys: mode, queues, description)", file=source,
                            line=top_lines.get(unknown[0]), field=unknown[0])
    mode = data.get("mode", "priority")
    if mode not in ("priority", "virtual"):
        raise WorkloadError(f"mode must be priority or virtual, got {shown(mode, 60)}", file=source,
                            line=top_lines.get("mode"), field="mode")
    items = data.get("queues")
    if not isinstance(items, list) or not items:
        raise WorkloadError("'queues' must be a non-empty list", file=source, line=top_lines.get("queues", 1),
                            field="queues")
    item_nodes = sequence_items(root, "queues")
    queues = []
    for position, item in enumerate(items):
        node = item_nodes[position] if position < len(item_nodes) else None
        line = node.start_mark.line + 1 if node is not None else top_lines.get("queues", 1)
        if not isinstance(item, dict):
            raise WorkloadError("each queue is a mapping (name, walltime, ...)", file=source, line=line,
                                field="queues")
        queues.append(_queue(item, source, line, key_lines(node)))
    names = [q.name for q in queues]
    for position, name in enumerate(names):
        if name in names[:position]:
            line = item_nodes[position].start_mark.line + 1 if position < len(item_nodes) else None
            raise WorkloadError(f"queue {name!r} is listed twice", file=source, line=line, field="name")
    for position, queue in enumerate(queues):
        unknown_targets = [t for t in queue.route_to if t not in names or t == queue.name]
        if unknown_targets:
            node = item_nodes[position] if position < len(item_nodes) else None
            line = key_lines(node).get("route_to") if node is not None else None
            raise WorkloadError(f"queue {queue.name}: route_to names {unknown_targets[0]!r}, which is "
                                + ("the queue itself" if unknown_targets[0] == queue.name else "not a queue here")
                                + f" (queues: {', '.join(names)})", file=source, line=line, field="route_to")
    if all(q.routing_only for q in queues):
        raise WorkloadError("every queue is a routing queue (no walltime): no queue runs jobs", file=source,
                            line=top_lines.get("queues", 1), field="walltime")
    return QueueConfig(tuple(queues), mode, source)


def _queue(item: dict, source: str, line: int, lines: dict[str, int]) -> Queue:
    def fail(key: str, message: str) -> WorkloadError:
        return WorkloadError(message, file=source, line=lines.get(key, line), field=key)

    unknown = sorted(key_name(key) for key in item if key not in _KEYS)
    if unknown:
        raise fail(unknown[0], f"unknown key {unknown[0]!r} (keys: {', '.join(sorted(_KEYS))})")
    route_to = item.get("route_to")
    if route_to is not None:
        if isinstance(route_to, str):
            route_to = [route_to]
        if not isinstance(route_to, list) or not route_to or not all(isinstance(t, str) and t for t in route_to):
            raise fail("route_to", "expected a list of queue names")
    for key in ("name", "walltime"):
        if item.get(key) in (None, "") and not (key == "walltime" and route_to):
            raise fail(key, f"{key} is required" + (" (or route_to, for a routing queue)" if key == "walltime" else ""))

    def count(key: str, minimum: int = 1) -> int | None:
        value = item.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value < MAX_MAGNITUDE:
            raise fail(key, f"expected an integer >= {minimum}, got {shown(value, 60)}")
        return value

    share = item.get("max_share")
    if share is not None and (isinstance(share, bool) or not isinstance(share, (int, float)) or not 0 < share <= 1):
        raise fail("max_share", f"expected a fraction in (0, 1], got {share!r}")
    pool = item.get("pool")
    if pool is not None:
        if isinstance(pool, str):
            pool = [pool]
        if not isinstance(pool, list) or not pool or not all(isinstance(p, str) for p in pool):
            raise fail("pool", "expected a list of cluster names")
    single = item.get("single_node", False)
    if not isinstance(single, bool):
        raise fail("single_node", f"expected true or false, got {single!r}")
    priority = item.get("priority", 0)
    if isinstance(priority, bool) or not isinstance(priority, int) or abs(priority) >= MAX_MAGNITUDE:
        raise fail("priority", f"expected an integer, got {shown(priority, 60)}")
    memory = item.get("job_max_mem")
    return Queue(
        name=str(item["name"]),
        walltime=_duration(item["walltime"], fail) if item.get("walltime") not in (None, "") else 0,
        priority=priority,
        max_cores=count("max_cores"), max_share=float(share) if share is not None else None,
        user_max_jobs=count("user_max_jobs"), user_max_cores=count("user_max_cores"),
        pool=tuple(pool) if pool else None, single_node=single,
        job_max_cores=count("job_max_cores"),
        job_max_mem=_memory(memory, fail) if memory is not None else None,
        route_to=tuple(route_to or ()),
    )


def _memory(value: Any, fail) -> int:
    """KB of a size (``500 GB``, ``64gb``; a plain number is KB), at least 1."""
    try:
        kb = parse_size_kb(value, "job_max_mem", {})
    except WorkloadError as error:
        raise fail("job_max_mem", error.message) from None
    if kb < 1:
        raise fail("job_max_mem", f"expected a size above 0, got {shown(value, 60)}")
    return kb


def _duration(value: Any, fail) -> int:
    if isinstance(value, bool):
        raise fail("walltime", f"expected a duration such as 2h, 4d or 7200, got {value!r}")
    if isinstance(value, (int, float)):
        seconds = float(value) if abs(value) < MAX_MAGNITUDE else math.inf
    else:
        match = _DURATION.match(str(value))
        if not match:
            raise fail("walltime", f"expected a duration such as 2h, 4d or 7200, got {shown(value, 60)}")
        seconds = float(match.group(1)) * _SECONDS[match.group(2).lower()]
    if not (math.isfinite(seconds) and 1 <= seconds < MAX_MAGNITUDE):
        raise fail("walltime", f"a walltime must be a positive number of seconds, got {shown(value, 60)}")
    return int(seconds)


def check_pools(config: QueueConfig, cluster_names: list[str]) -> None:
    """Every pool names clusters of the machine (else a WorkloadError naming the queue)."""
    known = set(cluster_names)
    for queue in config.queues:
        missing = [c for c in queue.pool or () if c not in known]
        if missing:
            raise WorkloadError(f"queue {queue.name}: pool names cluster {missing[0]!r}, which the machine lacks "
                                f"(clusters: {', '.join(cluster_names)})", file=config.source, field="pool")


# --------------------------------------------------------------------------- assignment


def assign_queues(config: QueueConfig, queue_names: list[str] | np.ndarray, requested: np.ndarray,
                  nodes: np.ndarray) -> Assignment:
    """Each job's configured queue (see the module docstring for jobs whose queue is missing).

    Decided once per distinct queue name and, for the jobs that must move, once per distinct
    (requested time, single-node), then spread over the jobs."""
    n = len(requested)
    queues = config.queues
    index = {q.name: i for i, q in enumerate(queues)}
    by_walltime = sorted((i for i, q in enumerate(queues) if not q.routing_only), key=lambda i: (queues[i].walltime, i))
    text = np.array([str(name) for name in queue_names[:n]], dtype=str) if n else np.zeros(0, dtype=str)
    names, name_codes = np.unique(text, return_inverse=True)
    name_codes = np.asarray(name_codes).reshape(-1)
    single = np.asarray(nodes, dtype=np.int64)[:n] <= 1
    wanted = np.asarray(requested, dtype=np.int64)[:n]
    named = np.array([index.get(str(name), -1) for name in names], dtype=np.int64)[name_codes]
    single_node_queue = np.array([q.single_node for q in queues] + [False], dtype=bool)[named]
    stays = (named >= 0) & (single | ~single_node_queue)
    result = np.where(stays, named, 0).astype(np.int64)
    moving = np.flatnonzero(~stays)
    moved: dict[str, int] = {}
    if len(moving):
        keys, key_codes = np.unique(np.stack([wanted[moving], single[moving]], axis=1), axis=0, return_inverse=True)
        targets = np.array([_fallback(queues, by_walltime, wall, bool(one)) for wall, one in keys.tolist()],
                           dtype=np.int64)
        result[moving] = targets[np.asarray(key_codes).reshape(-1)]
        pairs, counts = np.unique(np.stack([name_codes[moving], result[moving]], axis=1), axis=0, return_counts=True)
        for (name_code, queue), count in zip(pairs.tolist(), counts.tolist()):
            label = f"{names[name_code]} -> {queues[queue].name}"
            moved[label] = moved.get(label, 0) + count
    walltimes = np.array([q.walltime for q in queues], dtype=np.int64)
    over = int((wanted > walltimes[result]).sum()) if n else 0
    return Assignment(result, dict(sorted(moved.items())), over)


def _fallback(queues: tuple[Queue, ...], by_walltime: list[int], requested: int, single: bool) -> int:
    """The queue of a job whose own is missing (or is single-node while the job is not): the one
    with the smallest walltime at least its request among those it may use, else the longest."""
    eligible = [i for i in by_walltime if single or not queues[i].single_node] or by_walltime
    longest = max(eligible, key=lambda i: (queues[i].walltime, -i))
    return next((i for i in eligible if queues[i].walltime >= requested), longest)


# --------------------------------------------------------------------------- writing


def walltime_yaml(seconds: int) -> str:
    """A walltime as the YAML takes it, exactly, in the largest whole unit of days, hours, minutes:
    ``7d``, ``12h``, ``90m`` (admins read queue limits in days and hours, never weeks)."""
    for unit in ("d", "h", "m"):
        if seconds % _SECONDS[unit] == 0:
            return f"{seconds // _SECONDS[unit]}{unit}"
    return f"{seconds}s"


def config_yaml(config: QueueConfig, description: str = "") -> str:
    """The configuration as YAML that parse_queue_config reads back to the same configuration: walltimes
    in whole units, each queue's keys that differ from the defaults, in the order of Queue's fields."""
    lines = [f"description: {yaml_name(description)}"] if description else []
    lines += [f"mode: {config.mode}", "queues:"]
    defaults = Queue(name="", walltime=1)
    for queue in config.queues:
        lines.append(f"  - name: {yaml_name(queue.name)}")
        for key in (f.name for f in fields(Queue) if f.name != "name"):
            value = getattr(queue, key)
            if key != "walltime" and value == getattr(defaults, key):
                continue
            if key == "walltime":
                text = walltime_yaml(value)
            elif key == "pool":
                text = "[" + ", ".join(yaml_name(c) for c in value) + "]"
            elif isinstance(value, bool):
                text = "true" if value else "false"
            else:
                text = repr(value) if isinstance(value, float) else str(value)
            lines.append(f"    {key}: {text}")
    return "\n".join(lines) + "\n"


def yaml_name(text: str) -> str:
    """A name as a YAML scalar: bare when YAML reads it back as the same string, else single-quoted."""
    plain = re.fullmatch(r"[A-Za-z_][\w.-]*", text) and text.lower() not in (
        "true", "false", "yes", "no", "on", "off", "null", "y", "n")
    return text if plain else "'" + text.replace("'", "''") + "'"
