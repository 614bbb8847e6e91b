"""SchedLab's simulation engine: workload readers, platforms, policies, simulator and metrics.

The engine is a plain library (numpy + pandas) with a command line of its own
(``python -m engine``); it never imports Django.
"""

__version__ = "0.1.0"
