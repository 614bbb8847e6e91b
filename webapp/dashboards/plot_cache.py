"""Finished plots' JSON kept on disk (gzipped), so a page is computed once, not on every view.

A plot depends only on finished, immutable inputs (runs' schedules, a trace's parsed cache) and its
query parameters, so the key is a hash of exactly those plus FIGURES_VERSION and the code that computes
it (code_fingerprint: any edit of the dashboards or of the engine's metrics makes new keys, so a cached
file never outlives the code that made it); a re-run changes a run's finish time and so the key. The
comparison page's own figures (metrics table, fidelity table, Gantt window: webapp.dashboards.page_facts)
are kept the same way. Always check permissions before asking the cache.

A process builds one figure at a time (`one_build_at_a_time`): in a web server process the threads that
ask for plots nobody asked for before take turns instead of sharing the process's one interpreter lock
with each other and with every quick request of that process; a figure another thread finished while
this one waited is read, not built again. A page's own tables (milliseconds) do not wait for that turn.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import json
import os
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from django.http import HttpRequest, HttpResponse

from webapp.core.files import media_path
from webapp.experiments.models import Experiment, Run
from webapp.quotas.services import tree_size
from webapp.traces.models import Trace

#: Bump when a figure builder changes what it draws, so cached plots are rebuilt.
FIGURES_VERSION = 7
#: Cached plots kept per object (Gantt windows and ratio pairs add up); the oldest go first.
KEEP_PER_OBJECT = 64


#: The source whose edits change what is cached (figure builders, page figures, the engine's metrics).
FINGERPRINTED = ("webapp/dashboards", "engine/metrics", "engine/version.py")
ROOT = Path(__file__).resolve().parents[2]


@functools.cache
def code_fingerprint() -> str:
    """A hash of every Python file under FINGERPRINTED (computed once per process)."""
    digest = hashlib.sha256()
    for entry in FINGERPRINTED:
        path = ROOT / entry
        for file in sorted(path.rglob("*.py")) if path.is_dir() else [path]:
            digest.update(str(file.relative_to(ROOT)).encode())
            digest.update(file.read_bytes())
    return digest.hexdigest()[:16]


def cache_key(*parts: object) -> str:
    text = json.dumps([FIGURES_VERSION, code_fingerprint(), *parts], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def runs_state(experiment: Experiment, runs: list[Run]) -> list:
    """What a comparison's figures depend on besides their parameters: the machine and allocation rule,
    the sweep, and each run's id, label, status and finish time (a re-run changes the finish time)."""
    return [experiment.procs, experiment.allocation, experiment.sweep_param, experiment.sweep_values,
            [(run.pk, run.label, run.status, run.finished_at) for run in runs]]


def comparison_folder(experiment: Experiment, runs: list[Run], own: bool) -> str:
    """Where a comparison's cached files go: the experiment's folder for its own runs, else one per selection."""
    return f"experiments/{experiment.pk}" if own else f"compare/{cache_key([run.pk for run in runs])[:16]}"


def _plain(value: object) -> object:
    """numpy scalars as Python numbers (summaries computed now carry them), for json.dumps."""
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


_building = threading.Lock()
_builder = threading.local()


@contextmanager
def one_build_at_a_time() -> Iterator[None]:
    """Hold this process's build turn (re-entrant: a build may ask the cache for a figure it needs)."""
    if getattr(_builder, "holds", False):
        yield
        return
    with _building:
        _builder.holds = True
        try:
            yield
        finally:
            _builder.holds = False


def cached_gzip_json(folder: str, name: str, key: str, build: Callable[[], Any], *, turn: bool = True) -> bytes:
    """The gzipped JSON of `build()`, from MEDIA_ROOT/dashboards/<folder>/ when already made; built in
    this process's turn (`turn`: a figure, seconds of work) or at once (a page's own tables, milliseconds)."""
    directory = media_path(f"dashboards/{folder}")
    path = directory / f"{name}-{key}.json.gz"
    if path.exists():
        return path.read_bytes()
    if not turn:
        return _build_and_store(directory, path, build)
    with one_build_at_a_time():
        if path.exists():  # built by another thread while this one waited its turn
            return path.read_bytes()
        return _build_and_store(directory, path, build)


def _build_and_store(directory: Path, path: Path, build: Callable[[], Any]) -> bytes:
    data = gzip.compress(json.dumps(build(), separators=(",", ":"), default=_plain).encode(), compresslevel=5)
    directory.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-")
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.replace(tmp, path)
    _prune(directory)
    return data


def cached_json(folder: str, name: str, key: str, build: Callable[[], Any]) -> Any:
    """`build()` as it was stored (JSON types: tuples come back as lists, dict keys as strings): a comparison
    page's own tables, built without waiting for the process's figure builds."""
    return json.loads(gzip.decompress(cached_gzip_json(folder, name, key, build, turn=False)))


def _prune(directory: Path) -> None:
    files = sorted(directory.glob("*.json.gz"), key=lambda p: p.stat().st_mtime)
    for old in files[:-KEEP_PER_OBJECT]:
        old.unlink(missing_ok=True)


def gzip_json_response(request: HttpRequest, data: bytes) -> HttpResponse:
    """Send the gzipped bytes as they are when the browser takes gzip (all do), else unpack them."""
    if "gzip" in request.headers.get("Accept-Encoding", ""):
        response = HttpResponse(data, content_type="application/json")
        response["Content-Encoding"] = "gzip"
    else:
        response = HttpResponse(gzip.decompress(data), content_type="application/json")
    response["Vary"] = "Accept-Encoding"
    response["Cache-Control"] = "private, no-cache"
    return response


def plots_bytes_of(user: Any) -> int:
    """Cached plots of the user's experiments and traces, in bytes (webapp.quotas meter)."""
    experiments = Experiment.objects.filter(owner=user).values_list("pk", flat=True)
    traces = Trace.objects.filter(owner=user).values_list("pk", flat=True)
    return (sum(tree_size(media_path(f"dashboards/experiments/{pk}")) for pk in experiments)
            + sum(tree_size(media_path(f"dashboards/traces/{pk}")) for pk in traces))
