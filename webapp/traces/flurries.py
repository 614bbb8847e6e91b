"""The flurries of a trace for its page (Tsafrir & Feitelson, IPDPS 2006: one user's burst of jobs,
which can flip a comparison of schedulers), found by the engine (engine.api.find_flurries) once and
kept in the trace's summary."""

from __future__ import annotations

from typing import Any

from engine import api
from webapp.traces.models import Trace

#: the rule the page and the "without flurries" option use: the engine's default
RULE = api.FlurryRule()


def found_flurries(trace: Trace) -> dict[str, Any]:
    """{"rule", "first_submit", "jobs", "found": [Flurry.to_dict()]}, computed once per trace and rule."""
    stored = (trace.summary or {}).get("flurries")
    if stored and stored.get("rule") == RULE.to_dict():
        return stored
    workload = trace.workload()
    submits = workload.jobs["submit"]
    stored = {"rule": RULE.to_dict(), "first_submit": int(submits.min()) if len(submits) else 0,
              "jobs": int(len(submits)), "found": [f.to_dict() for f in api.find_flurries(workload, RULE)]}
    summary = {**(trace.summary or {}), "flurries": stored}
    Trace.objects.filter(pk=trace.pk).update(summary=summary)
    trace.summary = summary
    return stored


def flurry_listing(trace: Trace) -> dict[str, Any]:
    """The trace page's list: each flurry's user, time span (days from the first submit, and its length),
    jobs and share of the trace's jobs, with the definition and the total."""
    data = found_flurries(trace)
    zero = data["first_submit"]
    rows = [{"user": f["user"], "from": f"day {(f['first'] - zero) / 86400:,.1f}",
             "to": f"day {(f['last'] - zero) / 86400:,.1f}", "span": api.duration_text(f["last"] - f["first"]),
             "jobs": api.number_text(f["jobs"], 0), "share": api.percent_text(f["share"])} for f in data["found"]]
    jobs = sum(f["jobs"] for f in data["found"])
    return {"definition": RULE.describe(), "rows": rows, "threshold": api.number_text(RULE.threshold(data["jobs"]), 0),
            "jobs": api.number_text(jobs, 0), "share": api.percent_text(jobs / data["jobs"]) if data["jobs"] else "–"}
