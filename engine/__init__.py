"""SchedLab's simulation engine: workload readers, platforms, policies, simulator and metrics.

The engine is a plain library (numpy + pandas) with a command line of its own
(``python -m engine``); it never imports Django. Its public face is :mod:`engine.api`, whose names
are also importable from ``engine`` itself (``from engine import api`` or ``engine.run(...)``).
"""

from engine import api
from engine.api import *  # noqa: F403 - the face's names, listed in engine.api.__all__
from engine.api import __all__ as _face

__all__ = ["api", *_face]
