"""Replicated comparisons: many small runs of every policy (weekly windows, shaken copies,
user-resampled traces), a bootstrap interval for each difference and a verdict in words.

plan.py (the replicate sets, a plan of plain-data run specs) -> runs.py (one run spec on the
parsed trace) -> report.py (the finished runs combined into the report); local.py runs a plan on
this machine (in-process or a process pool). The public names are on engine.api.
"""
