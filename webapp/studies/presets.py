"""Preset studies: the grid and policies that reproduce a paper's figures on a real trace.

``paragon``: Suzuoka, Subhlok & Gross, "Evaluating job scheduling techniques for highly parallel
computers" (CMU-CS-95-149), §5. We have no Paragon log; the preset runs on KTH-SP2-1996 (100
processors; the paper's machine had 96) with the paper's buddy allocation (§3.1) and exact
estimates (§5.2's backfilling assumes them), replaying the trace at several loads:

- Figs. 4, 7, 8: size-weighted turnaround (``weighted_turnaround``) against load for SSS (``fcfs``),
  ``sorted``, backfilling (``easy`` with exact estimates), ``sorted-easy`` and ``tss``;
- Fig. 5: mean |skipping count| (``mean_abs_skip``) against load for ``sorted``;
- Fig. 6: turnaround against MASC for ``sorted-masc`` (one line per load).

Load factors: with buddy allocation KTH saturates already near its recorded load (jobs above 64
processors take the whole 100-processor machine, 33-64 take 64), so the grid spans 0.3-0.8 of the
recorded arrival rate, from a lightly to a heavily loaded machine.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from webapp.studies.services import create_study


@dataclass(frozen=True)
class StudyPreset:
    name: str
    title: str
    description: str
    trace_hint: str            # the trace file the preset is meant for (in ../shared/data/swf)
    policies: list[dict[str, Any]]
    grid: dict[str, list[Any]]
    allocation: str = "count"
    exact_estimates: bool = False
    figures: list[tuple[str, str, str]] = field(default_factory=list)   # (x, metric, what it shows)


PARAGON = StudyPreset(
    name="paragon",
    title="Paragon paper figures",
    description=("Suzuoka, Subhlok & Gross (CMU-CS-95-149) §5 on KTH-SP2-1996 with buddy allocation and exact "
                 "estimates: turnaround against load for SSS, sorted, backfilling, sorted + backfilling and time "
                 "sharing (Figs. 4, 7, 8), mean |skipping count| of sorted against load (Fig. 5), turnaround "
                 "against MASC (Fig. 6)."),
    trace_hint="KTH-SP2-1996-2.1-cln.swf.gz",
    # sorted and sorted-easy pin masc to inf, so the MASC grid applies to sorted-masc only
    policies=[{"preset": "fcfs"}, {"preset": "sorted", "params": {"masc": "inf"}}, {"preset": "easy"},
              {"preset": "sorted-easy", "params": {"masc": "inf"}}, {"preset": "tss"}, {"preset": "sorted-masc"}],
    grid={"load": [0.3, 0.4, 0.5, 0.6, 0.7, 0.8], "masc": [1, 2, 5, 10, 20, 50]},
    allocation="buddy",
    exact_estimates=True,
    figures=[("load", "weighted_turnaround", "Figs. 4, 7, 8"), ("load", "mean_abs_skip", "Fig. 5"),
             ("masc", "weighted_turnaround", "Fig. 6")],
)

PRESETS: dict[str, StudyPreset] = {p.name: p for p in (PARAGON,)}


def create_preset_study(owner: Any, name: str, trace: Any, **overrides: Any) -> Any:
    """The preset study ``name`` on ``trace``; ``overrides`` replace create_study arguments."""
    preset = PRESETS[name]
    arguments: dict[str, Any] = dict(
        name=f"{preset.title} on {trace.name}", trace=trace, policies=preset.policies, grid=preset.grid,
        allocation=preset.allocation, exact_estimates=preset.exact_estimates, description=preset.description,
        preset=preset.name)
    arguments.update(overrides)
    return create_study(owner, **arguments)
