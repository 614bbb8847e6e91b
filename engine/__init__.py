"""SchedLab's simulation engine: workload readers, platforms, policies, simulator and metrics.

The engine is a plain library (numpy + pandas) with a command line of its own
(``python -m engine``); it never imports Django. Its public face is :mod:`engine.api`, whose names
are also importable from ``engine`` itself (``from engine import api`` or ``engine.run(...)``);
like there, each is imported at its first use (see ``engine.api._LAZY``).
"""

from typing import Any

from engine import api
# engine.run (the module) is imported here because every run needs it; binding the function run()
# afterwards keeps ``engine.run`` the function, as the face's name, not the submodule.
from engine.run import run as run, simulate as simulate

__all__ = ["api", *api.__all__]


def __getattr__(name: str) -> Any:
    """The face's names (engine.api.__all__), loaded from engine.api at first use."""
    if name in api.__all__:    # imported at first use, as in engine.api
        return getattr(api, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
