"""The readers' error type and message helper; they live at the bottom of the engine (engine.errors),
since the platform readers use them too."""

from engine.errors import WorkloadError, shown

__all__ = ["WorkloadError", "shown"]
