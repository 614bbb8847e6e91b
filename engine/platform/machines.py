"""Machine descriptions: clusters of identical nodes (cores, RAM, GPUs, speed, properties, availability).

Three file forms are read, chosen by content (never by file name):

* **Alea ``.machines``** — TAB-separated, one cluster per line, no header:
  ``id  name  nodes  cores_per_node  speed  [RAM_per_node_KB  [properties]]``
  (RAM defaults to 1024 KB as in Alea; ``wagap-2013.swf.machines``, ``hpc2n.swf.machines``).
* **AleaNG 8 columns** — whitespace-separated, lines containing ``;`` are comments:
  ``id  name  nodes  cores_per_node  speed  RAM_per_node  properties_or_SPEC  GPUs_per_node``.
  RAM below 10240 is GB (AleaNG's rule), otherwise KB. Column 7 is a per-core SPEC-like speed
  when it is a number (``NGI_CZ.swf.machines``), otherwise a property string.
* **Our YAML** (documented in the README), which adds availability windows::

      clusters:
        - name: zewura
          nodes: 20
          cores: 80              # cores per node
          ram: 504.9 GiB         # per node; a number is KB, or a string with B/KB/MB/GB/TB/KiB/MiB/GiB/TiB
          gpus: 0                # per node (default 0)
          speed: 1.0             # relative (SPEC-like) speed per core (default 1)
          properties: [x86_64, brno]
          available_from: 0      # seconds in the trace's time base, or an ISO date (UTC); default always
          available_to: null

  or the same keys as **CSV** with a header line (``properties`` ``;``-separated).

Speed: a cluster's ``speed`` is relative. With speed scaling on, a job placed on cluster m runs
``runtime * max_speed / speed_m`` (trace runtimes are taken to come from the fastest cluster, as
in Alea); the fair-share speed factor is ``S = speed_m / max_speed``.
"""

from __future__ import annotations

import csv
import io
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from engine.platform.yaml_text import key_lines, key_name, load_yaml, sequence_items
from engine.workload.errors import WorkloadError, shown
from engine.workload.numbers import MAX_MAGNITUDE

KB = 1
_UNITS_KB = {
    "b": 1 / 1024, "kb": 1, "k": 1, "kib": 1, "mb": 1024, "m": 1024, "mib": 1024,
    "gb": 1024 ** 2, "g": 1024 ** 2, "gib": 1024 ** 2, "tb": 1024 ** 3, "t": 1024 ** 3, "tib": 1024 ** 3,
}
_SIZE = re.compile(r"^\s*((?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)\s*([A-Za-z]*)\s*$")   # unambiguous: linear
#: AleaNG: a RAM value below this is GB, otherwise KB
ALEANG_GB_LIMIT = 10240
ALEA_DEFAULT_RAM_KB = 1024


@dataclass(frozen=True)
class Cluster:
    """One homogeneous cluster: ``nodes`` nodes of ``cores`` cores, ``ram_kb`` KB and ``gpus`` GPUs each."""

    name: str
    nodes: int
    cores: int
    ram_kb: int
    gpus: int = 0
    speed: float = 1.0
    properties: tuple[str, ...] = ()
    available_from: int | None = None
    available_to: int | None = None
    id: int | None = None

    @property
    def total_cores(self) -> int:
        return self.nodes * self.cores


@dataclass(frozen=True)
class Machine:
    """Clusters of nodes. A job always runs inside one cluster."""

    clusters: tuple[Cluster, ...]
    source: str = ""
    format: str = ""
    notes: tuple[str, ...] = field(default=())

    @property
    def cores(self) -> int:
        return sum(c.total_cores for c in self.clusters)

    @property
    def nodes(self) -> int:
        return sum(c.nodes for c in self.clusters)

    @property
    def gpus(self) -> int:
        return sum(c.nodes * c.gpus for c in self.clusters)

    @property
    def max_speed(self) -> float:
        return max(c.speed for c in self.clusters)

    def cluster_index(self, name: str) -> int | None:
        for index, cluster in enumerate(self.clusters):
            if cluster.name == name:
                return index
        return None

    def describe(self) -> dict[str, Any]:
        return {
            "source": self.source, "format": self.format, "clusters": len(self.clusters),
            "nodes": self.nodes, "cores": self.cores, "gpus": self.gpus,
            "per_cluster": [
                {"name": c.name, "nodes": c.nodes, "cores_per_node": c.cores, "ram_gib_per_node": round(c.ram_kb / 1024 ** 2, 1),
                 "gpus_per_node": c.gpus, "speed": c.speed, "properties": list(c.properties),
                 "available_from": c.available_from, "available_to": c.available_to}
                for c in self.clusters
            ],
            "notes": list(self.notes),
        }


def homogeneous(cores: int, *, name: str = "machine") -> Machine:
    """A machine of ``cores`` single-core nodes without RAM limits (what a plain SWF run means)."""
    return Machine((Cluster(name, cores, 1, 0),), source="homogeneous", format="homogeneous")


# --------------------------------------------------------------------------- reading


def read_machines(path: str | Path) -> Machine:
    """Read a machine description file; the form is chosen by its content."""
    name = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except UnicodeDecodeError:
        raise WorkloadError("not a text file (machine descriptions are text)", file=name) from None
    except OSError as exc:
        raise WorkloadError(f"cannot read the file: {exc.strerror or exc}", file=name) from None
    return parse_machines(text, source=name)


def parse_machines(text: str, *, source: str = "<machines>") -> Machine:
    """Parse machine-description text (any of the three forms)."""
    kind = detect_machine_format(text, source=source)
    if kind == "yaml":
        return _parse_yaml(text, source)
    if kind == "csv":
        return _parse_csv(text, source)
    return _parse_alea(text, source)


def detect_machine_format(text: str, *, source: str | None = None) -> str:
    """``yaml`` (a ``clusters:`` key), ``csv`` (a header line with ``name`` and ``nodes``) or ``alea``."""
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith(("#", ";")):
            continue
        if re.match(r"^clusters\s*:", stripped) or stripped.startswith(("- name:", "---")):
            return "yaml"
        lowered = [cell.strip().lower() for cell in stripped.split(",")]
        if "name" in lowered and "nodes" in lowered:
            return "csv"
        return "alea"
    raise WorkloadError("no clusters: the machine description is empty", file=source)


def _parse_alea(text: str, source: str) -> Machine:
    clusters: list[Cluster] = []
    forms: set[str] = set()
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or ";" in line or line.startswith("#"):
            continue
        cells = raw.rstrip("\r\n").split("\t") if "\t" in raw else raw.split()
        cells = [c.strip() for c in cells if c.strip() != ""]
        if len(cells) == 8:
            forms.add("aleang")
            clusters.append(_aleang_cluster(cells, source, lineno))
        elif 5 <= len(cells) <= 7:
            forms.add("alea")
            clusters.append(_alea_cluster(cells, source, lineno))
        else:
            raise WorkloadError(
                f"expected 5 to 7 TAB-separated columns (Alea: id name nodes cores speed [RAM_KB [properties]]) "
                f"or 8 (AleaNG: ... RAM_GB properties GPUs), got {len(cells)}", file=source, line=lineno,
                field="line")
    if not clusters:
        raise WorkloadError("no clusters: the machine description has no cluster lines", file=source)
    _check_unique(clusters, source)
    fmt = "aleang" if forms == {"aleang"} else "alea" if forms == {"alea"} else "alea+aleang"
    return Machine(tuple(clusters), source=source, format=fmt)


def _alea_cluster(cells: list[str], source: str, lineno: int) -> Cluster:
    where = {"file": source, "line": lineno}
    ram = _positive_int(cells[5], "ram_kb", where, allow_zero=True) if len(cells) > 5 else ALEA_DEFAULT_RAM_KB
    properties = (cells[6],) if len(cells) > 6 else ()
    return Cluster(
        name=_name(cells[1], where), nodes=_positive_int(cells[2], "nodes", where),
        cores=_positive_int(cells[3], "cores_per_node", where), ram_kb=ram,
        speed=_positive_float(cells[4], "speed", where), properties=properties,
        id=_positive_int(cells[0], "id", where, allow_zero=True),
    )


def _aleang_cluster(cells: list[str], source: str, lineno: int) -> Cluster:
    where = {"file": source, "line": lineno}
    ram = _positive_float(cells[5], "ram", where, allow_zero=True)
    ram_kb = int(round(ram * 1024 ** 2)) if ram < ALEANG_GB_LIMIT else int(ram)
    spec = _number(cells[6])
    speed, properties = (spec, ()) if spec is not None and spec > 0 else (1.0, (cells[6],))
    return Cluster(
        name=_name(cells[1], where), nodes=_positive_int(cells[2], "nodes", where),
        cores=_positive_int(cells[3], "cores_per_node", where), ram_kb=ram_kb,
        gpus=_positive_int(cells[7], "gpus_per_node", where, allow_zero=True),
        speed=speed, properties=properties, id=_positive_int(cells[0], "id", where, allow_zero=True),
    )


def _parse_yaml(text: str, source: str) -> Machine:
    data, root = load_yaml(text, source)
    if isinstance(data, list):
        items, item_nodes = data, sequence_items(root)
    elif isinstance(data, dict) and isinstance(data.get("clusters"), list):
        items, item_nodes = data["clusters"], sequence_items(root, "clusters")
    else:
        raise WorkloadError("expected a top-level 'clusters:' list", file=source, line=1, field="clusters")
    clusters = []
    for position, item in enumerate(items):
        item_node = item_nodes[position] if position < len(item_nodes) else root
        line = item_node.start_mark.line + 1 if item_node is not None else 1
        if not isinstance(item, dict):
            raise WorkloadError("each cluster is a mapping of name, nodes, cores, ...", file=source, line=line,
                                field="clusters")
        clusters.append(_cluster_from_mapping(item, source, line, key_lines(item_node)))
    if not clusters:
        raise WorkloadError("no clusters listed", file=source, field="clusters")
    _check_unique(clusters, source)
    return Machine(tuple(clusters), source=source, format="yaml")


def _parse_csv(text: str, source: str) -> Machine:
    try:
        rows = list(csv.reader(io.StringIO(text)))
    except csv.Error as exc:        # a field over csv's 131,072-character limit, a NUL byte
        raise WorkloadError(f"not a CSV file: {exc}", file=source) from None
    header_index = next(i for i, row in enumerate(rows) if row and not row[0].lstrip().startswith(("#", ";")))
    header = [cell.strip().lower() for cell in rows[header_index]]
    clusters = []
    for offset, row in enumerate(rows[header_index + 1:], start=header_index + 2):
        if not row or not "".join(row).strip() or row[0].lstrip().startswith(("#", ";")):
            continue
        if len(row) != len(header):
            raise WorkloadError(f"expected {len(header)} columns like the header, got {len(row)}",
                                file=source, line=offset, field="line")
        item: dict[str, Any] = {k: (v.strip() if v.strip() != "" else None) for k, v in zip(header, row)}
        if item.get("properties"):
            item["properties"] = [p.strip() for p in str(item["properties"]).split(";") if p.strip()]
        clusters.append(_cluster_from_mapping(item, source, offset, {}))
    if not clusters:
        raise WorkloadError("no clusters listed", file=source)
    _check_unique(clusters, source)
    return Machine(tuple(clusters), source=source, format="csv")


_KNOWN_KEYS = {"name", "nodes", "cores", "ram", "gpus", "speed", "properties", "available_from", "available_to", "id"}


def _cluster_from_mapping(item: dict, source: str, line: int, lines: dict[str, int]) -> Cluster:
    def where(key: str) -> dict:
        return {"file": source, "line": lines.get(key, line)}

    unknown = sorted(key_name(key) for key in item if key not in _KNOWN_KEYS)
    if unknown:
        raise WorkloadError(f"unknown key {unknown[0]!r} (keys: {', '.join(sorted(_KNOWN_KEYS))})",
                            field=unknown[0], **where(unknown[0]))
    for key in ("name", "nodes", "cores"):
        if item.get(key) in (None, ""):
            raise WorkloadError(f"{key} is required", field=key, **where(key))
    properties = item.get("properties") or ()
    if isinstance(properties, str):
        properties = [properties]
    if not isinstance(properties, (list, tuple)) or not all(isinstance(p, (str, int)) for p in properties):
        raise WorkloadError("properties must be a list of words", field="properties", **where("properties"))
    available_from = _time(item.get("available_from"), "available_from", where("available_from"))
    available_to = _time(item.get("available_to"), "available_to", where("available_to"))
    if available_from is not None and available_to is not None and available_to <= available_from:
        raise WorkloadError("available_to must be after available_from", field="available_to",
                            **where("available_to"))
    return Cluster(
        name=_name(str(item["name"]), where("name")),
        nodes=_positive_int(item["nodes"], "nodes", where("nodes")),
        cores=_positive_int(item["cores"], "cores", where("cores")),
        ram_kb=parse_size_kb(item.get("ram", 0) or 0, "ram", where("ram")),
        gpus=_positive_int(item.get("gpus", 0) or 0, "gpus", where("gpus"), allow_zero=True),
        speed=_positive_float(item.get("speed", 1.0) or 1.0, "speed", where("speed")),
        properties=tuple(str(p) for p in properties),
        available_from=available_from, available_to=available_to,
        id=_positive_int(item["id"], "id", where("id"), allow_zero=True) if item.get("id") is not None else None,
    )


# --------------------------------------------------------------------------- values


def parse_size_kb(value: Any, field_name: str, where: dict) -> int:
    """A memory size in KB: a plain number is KB; a string may carry a unit (``504.9 GiB``, ``3gb``)."""
    if isinstance(value, bool):
        raise WorkloadError(f"expected a size, got {value!r}", field=field_name, **where)
    if isinstance(value, (int, float)):
        kb = _number(value)
        if kb is None or kb < 0:
            raise WorkloadError(f"expected a size >= 0, got {shown(value, 60)}", field=field_name, **where)
        return int(round(kb))
    match = _SIZE.match(str(value))
    unit = match.group(2).lower() if match else ""
    kb = _number(float(match.group(1)) * _UNITS_KB.get(unit, 1)) if match else None
    if kb is None or unit not in _UNITS_KB and unit != "":
        raise WorkloadError(f"expected a size such as 64 GiB or 65536 (KB), got {shown(value, 60)}", field=field_name,
                            **where)
    return int(round(kb))


def _number(text: Any) -> float | None:
    """A finite number of magnitude below MAX_MAGNITUDE, else None."""
    try:
        value = float(text)
    except (TypeError, ValueError, OverflowError):
        return None
    return value if math.isfinite(value) and abs(value) < MAX_MAGNITUDE else None


def _positive_int(text: Any, field_name: str, where: dict, *, allow_zero: bool = False) -> int:
    value = _number(text)
    if value is None or value != int(value) or value < (0 if allow_zero else 1) or isinstance(text, bool):
        expected = "an integer >= 0" if allow_zero else "a positive integer"
        raise WorkloadError(f"expected {expected}, got {shown(text, 60)}", field=field_name, **where)
    return int(value)


def _positive_float(text: Any, field_name: str, where: dict, *, allow_zero: bool = False) -> float:
    value = _number(text)
    if value is None or value < 0 or (value == 0 and not allow_zero) or isinstance(text, bool):
        raise WorkloadError(f"expected a positive number, got {shown(text, 60)}", field=field_name, **where)
    return value


def _name(text: str, where: dict) -> str:
    name = text.strip()
    if not name or any(ch in name for ch in " ;,\t"):
        raise WorkloadError(f"a cluster name is one word without ';' or ',', got {text!r}", field="name", **where)
    return name


def _time(value: Any, field_name: str, where: dict) -> int | None:
    """Seconds (int) or an ISO date/time (UTC unless it says otherwise) -> epoch seconds."""
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        moment = value if value.tzinfo else value.replace(tzinfo=UTC)
        return int(moment.timestamp())
    if hasattr(value, "isoformat") and not isinstance(value, (int, float, str)):   # a YAML date
        return int(datetime(value.year, value.month, value.day, tzinfo=UTC).timestamp())
    number = _number(value)
    if number is not None:
        return int(number)
    try:
        moment = datetime.fromisoformat(str(value))
    except ValueError:
        raise WorkloadError(f"expected seconds or an ISO date (2013-10-05), got {value!r}", field=field_name,
                            **where) from None
    return int((moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp())


def _check_unique(clusters: Iterable[Cluster], source: str) -> None:
    seen: set[str] = set()
    for cluster in clusters:
        if cluster.name in seen:
            raise WorkloadError(f"cluster {cluster.name!r} is listed twice", file=source, field="name")
        seen.add(cluster.name)
