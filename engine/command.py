"""The ``python -m engine simulate ...`` command line that runs a scenario again: what an export names
so that anybody can reproduce a schedule from the trace file alone (the web's downloads carry it)."""

from __future__ import annotations

import json
import math
import shlex
from collections.abc import Mapping, Sequence
from typing import Any


def simulate_command(trace: str, policy: Mapping[str, Any], *, procs: int | None = None, allocation: str = "count",
                     seed: int = 0, days: tuple[float, float] | None = None, load_factor: float = 1.0,
                     exact_estimates: bool = False, allocations: str | None = None, memory_unit: str | None = None,
                     policy_files: Sequence[str] = (), out: str = "schedule.csv") -> str:
    """The command line (shell-quoted) that simulates ``trace`` as the arguments say: the policy as one
    JSON spec with every parameter (``policy_files``: the Python plugin files it needs, as
    ``--policy-file``), the window as ``--days``, the load factor as ``--load``."""
    args = ["python", "-m", "engine", "simulate", trace]
    if procs is not None:
        args += ["--procs", str(int(procs))]
    if allocation != "count":
        args += ["--allocation", allocation]
    if allocations:
        args += ["--allocations", allocations]
    if memory_unit:
        args += ["--memory-unit", memory_unit]
    for file in policy_files:
        args += ["--policy-file", file]
    spec = {key: policy[key] for key in ("preset", "ordering", "algorithm", "params") if key in policy}
    args += ["--policy", json.dumps(spec, separators=(",", ":"), sort_keys=False)]
    if exact_estimates:
        args.append("--exact-estimates")
    args += ["--seed", str(int(seed))]
    if days is not None:
        low, high = days
        args += ["--days", f"{low:g}:{'' if math.isinf(high) else f'{high:g}'}"]
    if load_factor != 1.0:
        args += ["--load", f"{load_factor:g}"]
    args += ["--out", out]
    return shlex.join(args)
