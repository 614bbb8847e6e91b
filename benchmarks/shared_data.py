"""Where the real traces and machine descriptions are: shared/data beside the repository (or beside
the folder holding it, for a git worktree such as /work/wt/BRANCH), as tests/shared_data.py finds it."""

from pathlib import Path

_ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = next((p / "shared" / "data" for p in _ROOT.parents if (p / "shared" / "data").is_dir()),
                   _ROOT.parent / "shared" / "data")
