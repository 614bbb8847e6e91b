"""Finished plots' JSON kept on disk (gzipped), so a page is computed once, not on every view.

A plot depends only on finished, immutable inputs (runs' schedules, a trace's parsed cache) and its
query parameters, so the key is a hash of exactly those plus FIGURES_VERSION; a re-run changes a run's
finish time and so the key. Always check permissions before asking the cache.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.http import HttpRequest, HttpResponse

from webapp.core.files import media_path
from webapp.experiments.models import Experiment
from webapp.quotas.services import tree_size
from webapp.traces.models import Trace

#: Bump when a figure builder changes what it draws, so cached plots are rebuilt.
FIGURES_VERSION = 7
#: Cached plots kept per object (Gantt windows and ratio pairs add up); the oldest go first.
KEEP_PER_OBJECT = 64


def cache_key(*parts: object) -> str:
    text = json.dumps([FIGURES_VERSION, *parts], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def cached_gzip_json(folder: str, name: str, key: str, build: Callable[[], dict]) -> bytes:
    """The gzipped JSON of `build()`, from MEDIA_ROOT/dashboards/<folder>/ when already made."""
    directory = media_path(f"dashboards/{folder}")
    path = directory / f"{name}-{key}.json.gz"
    if path.exists():
        return path.read_bytes()
    data = gzip.compress(json.dumps(build(), separators=(",", ":")).encode(), compresslevel=5)
    directory.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-")
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.replace(tmp, path)
    _prune(directory)
    return data


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
