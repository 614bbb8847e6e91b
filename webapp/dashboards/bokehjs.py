"""BokehJS from our own static files, gzip-compressed: a staticfiles finder for the pages' bundles.

The bokeh wheel ships its bundles in bokeh/server/static/js/ next to files we must not collect
(compiler.js, the non-minified bundles, whose *.js.map files the wheel does not ship and which break
ManifestStaticFilesStorage — reference notes §1.2). This finder offers only the minified bundles the
pages load, copied once into the data directory with a gzip twin (`bokeh.min.js.gz`) next to each:

- `make run` and the tests serve static files from the finders (WHITENOISE_USE_FINDERS); whitenoise
  sends the .gz twin to every browser that accepts gzip (2.15 MB of BokehJS → about 0.6 MB);
- collectstatic (the docker image) collects the same three files, and whitenoise's
  CompressedStaticFilesStorage compresses them (and our own CSS/JS) into STATIC_ROOT.
"""

from __future__ import annotations

import gzip
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import bokeh
from bokeh.settings import settings as bokeh_settings
from django.conf import settings
from django.contrib.staticfiles.finders import BaseFinder
from django.contrib.staticfiles.utils import matches_patterns
from django.core.files.storage import FileSystemStorage

#: The bundles the pages load (dashboards/bokeh_scripts.html), served under static/bokeh/js/.
BUNDLES = ("bokeh.min.js", "bokeh-widgets.min.js", "bokeh-tables.min.js")
PREFIX = "bokeh"


def bundle_dir() -> Path:
    """DATA_DIR/static-bokeh/<version>/ holding js/<bundle> and js/<bundle>.gz, made on first use."""
    root = Path(settings.DATA_DIR) / "static-bokeh" / bokeh.__version__
    if not all((root / "js" / f"{name}.gz").exists() for name in BUNDLES):
        _build(root)
    return root


def _build(root: Path) -> None:
    """Copy and compress the bundles into a temporary folder, then rename it into place (atomic:
    several gunicorn workers may start at once)."""
    root.parent.mkdir(parents=True, exist_ok=True)
    build = Path(tempfile.mkdtemp(dir=root.parent, prefix=".build-"))
    try:
        source = Path(bokeh_settings.bokehjs_path()) / "js"
        (build / "js").mkdir()
        for name in BUNDLES:
            data = (source / name).read_bytes()
            (build / "js" / name).write_bytes(data)
            (build / "js" / f"{name}.gz").write_bytes(gzip.compress(data, compresslevel=9, mtime=0))
        try:
            os.rename(build, root)
        except OSError:  # another process made it first (the folder exists and is not empty)
            if not all((root / "js" / f"{name}.gz").exists() for name in BUNDLES):
                raise
    finally:
        shutil.rmtree(build, ignore_errors=True)


class BokehJSFinder(BaseFinder):
    """Finds static/bokeh/js/<bundle> (and its .gz twin) in bundle_dir()."""

    def _storage(self) -> FileSystemStorage:
        storage = FileSystemStorage(location=str(bundle_dir()))
        storage.prefix = PREFIX  # where collectstatic and whitenoise put the files: bokeh/js/...
        return storage

    def _names(self) -> list[str]:
        return [f"js/{name}{suffix}" for name in BUNDLES for suffix in ("", ".gz")]

    def find(self, path: str, find_all: bool = False, **kwargs: object) -> str | list[str]:
        if path.startswith(f"{PREFIX}/") and path[len(PREFIX) + 1:] in self._names():
            found = str(bundle_dir() / path[len(PREFIX) + 1:])
            return [found] if find_all or kwargs.get("all") else found
        return [] if find_all or kwargs.get("all") else ""

    def list(self, ignore_patterns: list[str] | None) -> Iterator[tuple[str, FileSystemStorage]]:
        storage = self._storage()
        for name in self._names():
            if not matches_patterns(name, ignore_patterns or []):
                yield name, storage
