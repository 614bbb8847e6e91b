"""Where numba keeps the engine's compiled kernels: a folder named by a hash of the engine's source.

numba's own cache checks only the file that defines a kernel. A kernel that calls a kernel of another
module (the pool loop calls the fit index's) has the callee compiled into it, so editing the callee's
file, or upgrading the engine in place, would leave the caller running the old code from the cache.
Naming the cache folder after every engine source file makes any change start a fresh cache.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

ENGINE = Path(__file__).resolve().parent


def source_key() -> str:
    """16 hex digits of a hash over the path and content of every engine source file."""
    digest = hashlib.sha256()
    for path in sorted(ENGINE.rglob("*.py")):
        digest.update(str(path.relative_to(ENGINE)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def cache_dir(base: str | None = None) -> Path:
    """The folder for this source: under NUMBA_CACHE_DIR if set (a child process keeps its parent's
    folder), else under the user's cache folder."""
    key = source_key()
    root = Path(base) if base else Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "schedlab-numba"
    return root if root.name == key else root / key


def configure() -> None:
    """Point numba's cache at :func:`cache_dir`; call before numba is first imported."""
    os.environ["NUMBA_CACHE_DIR"] = str(cache_dir(os.environ.get("NUMBA_CACHE_DIR") or None))
