"""The report of a replicated comparison: for each metric and each pair of policies, the paired
difference over the replicates, its bootstrap interval and a verdict in words.

``pairs`` holds one entry per (replicate set, pair of policies, metric), ``a`` the earlier policy
of the comparison and ``b`` the later one: ``difference`` = mean over replicates of b - a in the
metric's unit, ``relative`` = mean(b) / mean(a) - 1, each with its interval
(engine.metrics.bootstrap). A difference is *told from noise* when its interval (the relative one
where defined) leaves out zero. The verdict of the first set says whether the other sets agree:
"holds under shaking" (same direction, interval clear of zero), "not confirmed under shaking"
(interval across zero) or "reversed under shaking". Intervals are per comparison, not adjusted for
the number of pairs and metrics.

Few replicates: with fewer than :data:`MIN_REPLICATES` there is no verdict ("too few replicates to
tell"); with fewer than :data:`FEW_REPLICATES` the verdict says its interval runs narrow. Measured
(percentile method, 300 synthetic comparisons with no difference, replicate levels lognormal with
sigma 0.8, 10 % noise per policy): a 95 % interval covered zero in 81 % of them with 5 replicates,
89 % with 10, 91 % with 20, 95 % with 52 (engine/metrics/bootstrap.py).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from engine.errors import WorkloadError
from engine.metrics.bootstrap import Bootstrap, PairedInterval, paired_interval, resample_indices
from engine.metrics.summary import plain
from engine.metrics.units import duration_text, metric, number_text, percent_text
from engine.replicates.plan import KINDS, UNDER

#: fewer replicates than this: no verdict
MIN_REPLICATES = 5
#: fewer replicates than this: the verdict says the interval runs narrow
FEW_REPLICATES = 20


def combine_replicates(plan: dict[str, Any], outcomes: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """The report (JSON-able) of ``plan`` from the outcomes of all its runs
    (engine.replicates.runs.run_replicate, in any order). A run of the plan without an outcome is
    a WorkloadError naming it: a report is made of complete sets only."""
    by_id = {outcome["id"]: outcome for outcome in outcomes}
    missing = [run["id"] for run in plan["runs"] if run["id"] not in by_id]
    if missing:
        raise WorkloadError(f"{len(missing)} of {len(plan['runs'])} runs have no result (first: {missing[0]}); "
                            "a replicate set is reported only when every run has finished")
    how = Bootstrap(**{k: v for k, v in plan["bootstrap"].items() if k != "description"})
    names = [p["name"] for p in plan["policies"]]
    table = _values(plan, by_id)
    pairs = []
    for replicate_set in plan["sets"]:
        count = replicate_set["replicates"]
        indices = resample_indices(count, how) if count >= 2 else None
        for i, a in enumerate(names):
            for b in names[i + 1:]:
                for code in plan["metrics"]:
                    pairs.append(_pair(replicate_set, a, b, code, table, how, indices))
    _add_agreement(pairs, plan["sets"])
    return {
        "format": "schedlab-replicates-report", "version": 1,
        "trace": plan["trace"], "policies": plan["policies"], "sets": plan["sets"], "load": plan["load"],
        "days": plan["days"], "flurries": plan["flurries"], "counted": plan["counted"],
        "bootstrap": plan["bootstrap"], "metrics": plan["metrics"], "seed": plan["seed"],
        "pairs": pairs,
        "runs": [{key: by_id[run["id"]].get(key) for key in ("id", "set", "replicate", "policy", "jobs", "counted_jobs",
                                                             "metrics", "wall_seconds", "cpu_seconds")}
                 for run in plan["runs"]],
        "run_seconds": float(sum(by_id[run["id"]]["wall_seconds"] for run in plan["runs"])),
        "run_cpu_seconds": float(sum(by_id[run["id"]].get("cpu_seconds") or 0.0 for run in plan["runs"])),
    }


def _values(plan: dict[str, Any], by_id: dict[str, dict[str, Any]]) -> dict[tuple[str, str, str], np.ndarray]:
    """(set, policy, metric) -> the metric per replicate (NaN where undefined)."""
    table: dict[tuple[str, str, str], np.ndarray] = {}
    for replicate_set in plan["sets"]:
        for policy in plan["policies"]:
            for code in plan["metrics"]:
                table[replicate_set["name"], policy["name"], code] = np.full(replicate_set["replicates"], np.nan)
    for run in plan["runs"]:
        values = by_id[run["id"]]["metrics"]
        for code in plan["metrics"]:
            value = values.get(code)
            table[run["set"], run["policy"], code][run["replicate"]] = np.nan if value is None else float(value)
    return table


def _pair(replicate_set: dict[str, Any], a: str, b: str, code: str,
          table: dict[tuple[str, str, str], np.ndarray], how: Bootstrap, indices: np.ndarray | None) -> dict[str, Any]:
    name = replicate_set["name"]
    values_a, values_b = table[name, a, code], table[name, b, code]
    both = ~(np.isnan(values_a) | np.isnan(values_b))
    entry: dict[str, Any] = {"a": a, "b": b, "metric": code, "set": name, "replicates": int(both.sum()),
                             "left_out": int((~both).sum()), "method": how.describe()}
    if not both.any():
        entry.update(difference=None, ci=None, relative=None, relative_ci=None, mean_a=None, mean_b=None,
                     told_from_noise=False, direction=None, better=None,
                     verdict=f"no replicate of {name} gives {code} for both policies")
        return entry
    shared = indices if both.all() else None     # a replicate left out: resample the others (same seed)
    interval = paired_interval(values_a[both], values_b[both], how, shared)
    entry.update(difference=interval.difference, ci=_listed(interval.ci), relative=interval.relative,
                 relative_ci=_listed(interval.relative_ci), mean_a=interval.mean_a, mean_b=interval.mean_b)
    sign = _sign(interval)
    entry["told_from_noise"] = sign != 0
    entry["direction"] = "higher" if sign > 0 else "lower" if sign < 0 else None
    entry["better"] = None if sign == 0 else (b if (sign < 0) == metric(code).lower_is_better else a)
    entry["verdict"] = _verdict(entry, interval, replicate_set, how)
    return plain(entry)


def _sign(interval: PairedInterval) -> int:
    """+1 / -1 when the interval (relative where defined) lies above / below zero, else 0 (also
    with fewer than MIN_REPLICATES replicates)."""
    ci = interval.relative_ci or interval.ci
    if ci is None or interval.replicates < MIN_REPLICATES:
        return 0
    return 1 if ci[0] > 0 else -1 if ci[1] < 0 else 0


def _listed(ci: tuple[float, float] | None) -> list[float] | None:
    return None if ci is None else [ci[0], ci[1]]


def _level(how: Bootstrap) -> str:
    return f"{how.confidence * 100:g} %"


def _percent(value: float) -> str:
    size = abs(value) * 100
    return f"{size:.0f}" if size >= 10 else f"{size:.1f}"


def _percent_range(near: float, far: float) -> str:
    """``4-14``: with as many decimals as it takes for the two ends to differ (up to three)."""
    low, high = _percent(near), _percent(far)
    decimals = 1
    while low == high and decimals <= 3:
        low, high = f"{abs(near) * 100:.{decimals}f}", f"{abs(far) * 100:.{decimals}f}"
        decimals += 1
    return f"{low}-{high}"


def _amount(value: float, code: str) -> str:
    """The size of a difference of metric ``code``, as the formatting module writes its values
    (a difference of shares in percentage points)."""
    kind = metric(code)
    if kind.kind == "duration":
        return duration_text(abs(value))
    if kind.kind == "percent":
        return f"{abs(value) * 100:.1f} points"
    shown = number_text(abs(value), max(kind.digits, 2))
    return f"{shown} {kind.unit}" if kind.unit else shown


def _verdict(entry: dict[str, Any], interval: PairedInterval, replicate_set: dict[str, Any], how: Bootstrap) -> str:
    """The plain sentence: "conservative's mean wait is 9 % lower than easy's (95 % CI 4-14 % lower,
    52 weekly windows)" or "no difference we can tell from noise ..."."""
    code = entry["metric"]
    label = metric(code).label
    words = label[:1].lower() + label[1:]
    a, b = entry["a"], entry["b"]
    level = _level(how)
    sample = f"{interval.replicates} {KINDS[replicate_set['kind']][0]}"
    if interval.ci is None or interval.replicates < MIN_REPLICATES:
        return f"too few replicates to tell ({sample}; at least {MIN_REPLICATES} needed)"
    if interval.replicates < FEW_REPLICATES:
        sample += ", few: the interval runs narrow"
    sign = _sign(interval)
    if interval.relative_ci is not None:        # in per cent of a's value
        low, high = interval.relative_ci
        estimate = interval.relative or 0.0
        size = f"{_percent(estimate)} %"
        signed = [f"{value * 100:+.1f} %" for value in (estimate, low, high)]
        near, far = sorted((abs(low), abs(high)))
        span = f"{_percent_range(near, far)} %"
    else:                                       # a's value is 0: in the metric's unit
        low, high = interval.ci
        estimate = interval.difference
        size = _amount(estimate, code)
        signed = [f"{value:+.3g}" for value in (estimate, low, high)]
        near, far = sorted((abs(low), abs(high)))
        span = f"{_amount(near, code)} to {_amount(far, code)}"
    if sign == 0:
        return (f"no difference we can tell from noise: {b}'s {words} differs from {a}'s by {signed[0]} "
                f"({level} CI {signed[1]} to {signed[2]}, {sample})")
    way = "higher" if sign > 0 else "lower"
    return f"{b}'s {words} is {size} {way} than {a}'s ({level} CI {span} {way}, {sample})"


def _add_agreement(pairs: list[dict[str, Any]], sets: list[dict[str, Any]]) -> None:
    """Append to each verdict of the first set whether every other set agrees with it."""
    if len(sets) < 2:
        return
    first = sets[0]["name"]
    kinds = {s["name"]: s["kind"] for s in sets}
    others = {(p["set"], p["a"], p["b"], p["metric"]): p for p in pairs if p["set"] != first}
    for pair in pairs:
        if pair["set"] != first or pair["replicates"] < MIN_REPLICATES:
            continue
        notes = [_agreement(pair, others[(s["name"], pair["a"], pair["b"], pair["metric"])], UNDER[kinds[s["name"]]])
                 for s in sets[1:]]
        pair["agreement"] = notes
        pair["verdict"] = pair["verdict"][:-1] + "; " + "; ".join(notes) + ")"


def _agreement(pair: dict[str, Any], other: dict[str, Any], under: str) -> str:
    """What ``other`` (the same comparison on another set) says of ``pair``'s verdict."""
    if other["replicates"] < MIN_REPLICATES or not other.get("ci"):
        return f"too few replicates under {under}"
    if other["direction"] is None:
        return f"no difference under {under} either" if pair["direction"] is None else f"not confirmed under {under}"
    if pair["direction"] is None:
        return f"but under {under} {other['b']}'s is {other['direction']}"
    return f"holds under {under}" if other["direction"] == pair["direction"] else f"reversed under {under}"


def verdict_table(report: dict[str, Any]) -> str:
    """The report as text: what was replicated and counted, then one line per pair and metric
    (the first set's verdicts, which say whether the other sets agree, then the other sets')."""
    lines = ["replicates: " + "; ".join(f"{s['name']} = {s['description']} ({s['citation']})" for s in report["sets"]),
             f"counted: {report['counted']['description']}",
             f"intervals: {report['bootstrap']['description']}",
             _flurry_line(report["flurries"]), ""]
    header = ("set", "metric", "a", "b", "b - a", "relative", "n", "verdict")
    rows = [header]
    for pair in report["pairs"]:
        difference = "" if pair["difference"] is None else _signed(pair["difference"], pair["metric"])
        relative = "" if pair["relative"] is None else f"{pair['relative'] * 100:+.1f} %"
        rows.append((pair["set"], pair["metric"], pair["a"], pair["b"], difference, relative, str(pair["replicates"]),
                     pair["verdict"]))
    widths = [max(len(row[i]) for row in rows) for i in range(len(header) - 1)]
    for row in rows:
        lines.append("  ".join(cell.ljust(width) for cell, width in zip(row, widths)) + "  " + row[-1])
    return "\n".join(lines)


def _signed(value: float, code: str) -> str:
    sign = "-" if value < 0 else "+"
    return sign + _amount(value, code)


def _flurry_line(flurries: dict[str, Any]) -> str:
    found = flurries["found"]
    if not found:
        return f"flurries: none found ({flurries['definition']})"
    share = sum(f["share"] for f in found)
    what = (f"removed ({number_text(flurries['jobs_removed'])} jobs)" if flurries["removed"]
            else "kept (--without-flurries removes them)")
    return f"flurries: {len(found)} found, {percent_text(share)} of the jobs, {what} ({flurries['definition']})"


def judge_claim(report: dict[str, Any], a: str, b: str, code: str, claim: str,
                replicate_set: str | None = None) -> dict[str, Any]:
    """Whether the report backs a claim such as a paper's "``b``'s ``code`` is lower than ``a``'s"
    (``claim``: ``"lower"``, ``"higher"`` or ``"same"``), on ``replicate_set`` (default: the first):
    ``{"status": "agrees" | "contradicts" | "cannot tell", "sentence", "pair"}``. A difference the
    replicates cannot tell from noise neither backs nor contradicts "lower" or "higher"; it backs "same"."""
    if claim not in ("lower", "higher", "same"):
        raise WorkloadError(f"a claim is lower, higher or same, got {claim!r}")
    name = replicate_set or report["sets"][0]["name"]
    flip = False
    for pair in report["pairs"]:
        if pair["set"] == name and pair["metric"] == code and {pair["a"], pair["b"]} == {a, b}:
            flip = pair["a"] != a
            break
    else:
        raise WorkloadError(f"the report compares no {a} and {b} on {code} in {name}")
    direction = pair.get("direction")
    if direction is not None and flip:
        direction = "lower" if direction == "higher" else "higher"
    if claim == "same":
        status = "agrees" if direction is None else "contradicts"
    elif direction is None:
        status = "cannot tell"
    else:
        status = "agrees" if direction == claim else "contradicts"
    label = metric(code).label
    said = (f"{b}'s {label[:1].lower() + label[1:]} is "
            + ("the same as" if claim == "same" else f"{claim} than") + f" {a}'s")
    wording = {"agrees": "our replicates agree", "contradicts": "our replicates disagree",
               "cannot tell": "our replicates cannot tell"}[status]
    return {"status": status, "sentence": f"Claim: {said}. {wording.capitalize()}: {pair['verdict']}.",
            "pair": pair}
