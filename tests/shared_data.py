"""Where the real traces and machine descriptions are: ../shared/data beside the repository."""

from pathlib import Path

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
