"""PLAN 1, 2, 3 against FCFS + EASY on the real traces we have (issue 5 §3; paper §VI).

For each (trace, window of days) every policy is simulated once (schedules are cached as CSV under
benchmarks/out/plan-comparison/, so a second call only prints) and the script prints:

* utilization (paper Table II), mean wait and mean response, decision times;
* mean wait and mean response per month (30-day bins from the window's first submit; Figs. 4–5);
* the mean-wait grid by job size × runtime (15 × 15 logarithmic bins, the dashboard's binning)
  and the PLAN 2 / EASY ratio (Fig. 6): how many occupied cells PLAN 2 improves, and a job-weighted
  summary; the heat maps themselves are saved as a self-contained HTML file.

    .venv/bin/python benchmarks/plan_comparison.py [--run LLNL-Atlas-2006-2.1-cln.swf.gz:0:  ...]
        [--policies easy,plan1,plan2,plan3] [--out benchmarks/out/plan-comparison]

A --run is TRACE:FROM:TO in days from the trace's first submit (TO may be empty: to the end).
The paper's numbers (Table II) are printed next to ours; their traces are longer versions of the
same machines (LLNL 60,332 jobs Nov 06–Jun 07, SDSC 67,155 jobs May 00–Dec 01).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.metrics.summary import summarize_result  # noqa: E402
from engine.metrics.timeseries import monthly  # noqa: E402
from engine.run import simulate  # noqa: E402
from engine.workload import load_workload  # noqa: E402
from engine.workload.window import parse_days, select_days  # noqa: E402
from webapp.dashboards.figures.heatmaps import (grid_edges, mean_wait_grid, ratio_heatmap,  # noqa: E402
                                                wait_heatmaps, wait_ratio)
from shared_data import SHARED_DATA  # noqa: E402

DATA = (SHARED_DATA / "swf")
DEFAULT_RUNS = ("LLNL-Atlas-2006-2.1-cln.swf.gz:0:", "SDSC-BLUE-2000-4.2-cln.swf.gz:0:30")
#: paper Table II: utilization under FCFS (+EASY), PLAN 1, PLAN 2, PLAN 3
PAPER_UTILIZATION = {
    "LLNL": {"easy": 0.744, "plan1": 0.750, "plan2": 0.751, "plan3": 0.758},
    "SDSC": {"easy": 0.780, "plan1": 0.785, "plan2": 0.782, "plan3": 0.793},
}


def run_policy(workload, capacity: int, policy: str, cache: Path) -> tuple[pd.DataFrame, dict]:
    """The schedule and summary of ``policy`` (from the cache when it is there)."""
    csv, summary_file = Path(f"{cache}.csv.gz"), Path(f"{cache}.json")
    if csv.exists() and summary_file.exists():
        return pd.read_csv(csv), pd.read_json(summary_file, typ="series").to_dict()
    began = time.perf_counter()
    result = simulate(workload, capacity, policy)
    summary = summarize_result(result)
    print(f"  {policy}: simulated in {(time.perf_counter() - began) / 60:.1f} min", flush=True)
    cache.parent.mkdir(parents=True, exist_ok=True)
    result.schedule.to_csv(csv, index=False)
    pd.Series(summary, dtype=object).to_json(summary_file)
    return result.schedule, summary


def monthly_wait_and_response(schedule: pd.DataFrame) -> pd.DataFrame:
    """Mean wait and mean response per 30-day bin of submission (engine.metrics.timeseries.monthly;
    the response is its mean "wait" of a copy whose wait column holds the response)."""
    first = int(schedule["submit"].min())
    shifted = schedule.assign(submit=schedule["submit"] - first, end=schedule["end"] - first,
                              start=schedule["start"] - first)
    waits = monthly(shifted)
    responses = monthly(shifted.assign(wait=shifted["end"] - shifted["submit"]))
    return pd.DataFrame({"month": waits["month"], "jobs": waits["jobs"], "mean_wait": waits["mean_wait"],
                         "mean_response": responses["mean_wait"]})


def compare(trace: str, low: float, high: float, policies: list[str], out: Path) -> None:
    workload = load_workload(DATA / trace)
    capacity = int(workload.metadata["procs"])
    window = select_days(workload, low, high)
    label = f"{trace.split('-')[0]}-{trace.split('-')[1]} days {low:g}:{high:g}"
    print(f"\n== {label}: {len(window.jobs):,} jobs, {capacity} processors", flush=True)
    schedules, summaries = {}, {}
    for policy in policies:
        stem = out / f"{Path(trace).name.split('.swf')[0]}_{low:g}-{high:g}_{policy}"
        schedules[policy], summaries[policy] = run_policy(window, capacity, policy, stem)

    paper = PAPER_UTILIZATION.get(trace.split("-")[0], {})
    rows = []
    for policy, s in summaries.items():
        rows.append({"policy": policy, "utilization": s["utilization"], "paper utilization": paper.get(policy),
                     "mean wait (s)": s["mean_wait"], "mean response (s)": s["mean_response"],
                     "max wait (s)": s["max_wait"], "wall (min)": s["wall_seconds"] / 60,
                     "mean decision (ms)": s.get("mean_decision_ms"), "max decision (ms)": s.get("max_decision_ms"),
                     "annealed": s.get("annealed_decisions")})
    formats = {"utilization": "{:.3f}", "paper utilization": "{:.3f}", "mean wait (s)": "{:,.0f}",
               "mean response (s)": "{:,.0f}", "max wait (s)": "{:,.0f}", "wall (min)": "{:.1f}",
               "mean decision (ms)": "{:.1f}", "max decision (ms)": "{:,.0f}", "annealed": "{:,.0f}"}
    print(pd.DataFrame(rows).to_string(index=False, na_rep="–", formatters={
        name: (lambda f: lambda v: "–" if v is None or v != v else f.format(v))(f)  # noqa: B023 - f bound by the call
        for name, f in formats.items()}))

    months = {policy: monthly_wait_and_response(schedule) for policy, schedule in schedules.items()}
    first = next(iter(months.values()))
    table = pd.DataFrame({"month": first["month"], "jobs": first["jobs"]})
    submitted = (first["jobs"] > 0).to_numpy()   # the last bin may hold only the window's last ends
    for policy, frame in months.items():
        table[f"wait {policy}"] = frame["mean_wait"].round(0)
    for policy, frame in months.items():
        table[f"resp {policy}"] = frame["mean_response"].round(0)
    print("monthly mean wait / mean response (s):")
    print(table[submitted].to_string(index=False))

    if "easy" in schedules and "plan2" in schedules:
        edges = grid_edges(schedules)
        grids = {policy: mean_wait_grid(schedule, *edges) for policy, schedule in schedules.items()}
        ratio = wait_ratio(grids["plan2"], grids["easy"])
        occupied = np.isfinite(ratio)
        count = grids["easy"].count[occupied]
        better, worse = (ratio[occupied] < 1).sum(), (ratio[occupied] > 1).sum()
        weighted = float(np.exp(np.average(np.log(ratio[occupied]), weights=count)))
        print(f"PLAN2/EASY mean-wait ratio over {occupied.sum()} occupied size×runtime cells: "
              f"{better} cells PLAN2 waits less, {worse} more, {occupied.sum() - better - worse} equal; "
              f"job-weighted geometric mean ratio {weighted:.2f}")
        big = {policy: schedule[schedule["procs"] * 8 >= capacity] for policy, schedule in schedules.items()}
        print(f"jobs of at least 1/8 of the machine ({len(big['easy']):,}): mean wait "
              + ", ".join(f"{policy} {frame['wait'].mean():,.0f} s" for policy, frame in big.items()))
        from bokeh.embed import file_html
        from bokeh.layouts import column
        from bokeh.resources import INLINE

        page = column(wait_heatmaps({p: grids[p] for p in ("easy", "plan2") if p in grids}),
                      ratio_heatmap("PLAN2", grids["plan2"], "EASY", grids["easy"]))
        html = out / f"heatmaps_{Path(trace).name.split('.swf')[0]}_{low:g}-{high:g}.html"
        html.write_text(file_html(page, INLINE, f"PLAN2 vs EASY: {label}"))
        print(f"heat maps: {html}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--run", action="append", help="TRACE:FROM:TO (days); repeatable")
    parser.add_argument("--policies", default="easy,plan1,plan2,plan3")
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "out" / "plan-comparison")
    args = parser.parse_args()
    for run in args.run or DEFAULT_RUNS:
        trace, _, days = run.partition(":")
        compare(trace, *parse_days(days), args.policies.split(","), args.out)


if __name__ == "__main__":
    main()
