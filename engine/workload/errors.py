"""The readers' error type; it lives at the bottom of the engine (engine.errors), since the platform
readers raise it too."""

from engine.errors import WorkloadError

__all__ = ["WorkloadError"]
