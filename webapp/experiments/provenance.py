"""Where a result comes from, written into every export: the trace (name and sha256 of the uploaded
file), machine, queues, policy spec with every parameter, seed, window, load factor, engine version and
the ``python -m engine simulate ...`` command line that gives the same schedule.

The CSV downloads begin with these as ``#`` lines (``pandas.read_csv(path, comment="#")`` reads past
them); the comparison's HTML file shows them as a table.
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path
from html import escape
from collections.abc import Iterable, Iterator
from typing import Any

from django.http import HttpResponse, StreamingHttpResponse

from engine import api
from webapp.experiments.models import Experiment, Run
from webapp.experiments.services import metric_cells, metric_headings, rejection_reasons


def window_text(experiment: Experiment) -> str:
    """The time window in days and as dates in the trace's zone (when it has a calendar)."""
    if not experiment.days:
        return "the whole trace"
    low, high = api.parse_days(experiment.days)
    trace = experiment.trace
    first = (trace.summary or {}).get("first_submit")
    axis = trace.time_axis(first) if first is not None else None
    upto = "the end" if math.isinf(high) else f"day {high:g}"
    text = f"jobs submitted from day {low:g} to {upto} after the first submit (--days {experiment.days})"
    if axis is not None and axis.calendar:
        end = "the end of the trace" if math.isinf(high) else axis.text(first + high * 86_400)
        text += f": {axis.text(first + low * 86_400)} to {end} ({axis.tz})"
    return text


def time_origin_text(experiment: Experiment) -> str:
    """What the schedule's times (submit, start, end) count from."""
    axis = experiment.trace.time_axis()
    if axis.calendar:
        return f"seconds since {axis.text(0)} ({axis.clock}) in the trace's own time base"
    return "seconds in the trace's own time base (it names no calendar date)"


def experiment_items(experiment: Experiment) -> list[tuple[str, str]]:
    """What every run of the experiment shares."""
    trace = experiment.trace
    used = getattr(experiment, "allocations_used", None)
    items = [
        ("experiment", f"{experiment.name} (#{experiment.pk}), by {experiment.owner.username}"),
        ("trace", f"{trace.name} (#{trace.pk}), uploaded as {trace.original_name or trace.download_name}"),
        ("trace sha256", trace.sha256),
        ("machine", f"{experiment.machine_label}: one pool of {experiment.procs:,} processors, "
                    f"allocation rule {experiment.allocation}"),
        ("queues", "none: every job waits in one queue of the policy's (no queue limits)"),
        ("estimates", "exact runtimes (policies see real runtimes)" if experiment.exact_estimates
         else "the requested times (policies never see real runtimes)"),
        ("seed", str(experiment.seed)),
        ("window", window_text(experiment)),
        ("times", time_origin_text(experiment)),
    ]
    if used is not None:
        items.append(("allocations", used.file_name))
    return items


def run_items(run: Run) -> list[tuple[str, str]]:
    """One run's provenance: the experiment's, then its policy, load factor, engine and command line."""
    experiment = run.experiment
    meta = run.load_meta()
    policy = meta.get("policy") or api.resolve_policy(run.policy).to_dict()
    summary = run.summary or {}
    items = experiment_items(experiment) + [
        ("run", f"{run.label} (#{run.pk})"),
        ("policy", json.dumps(policy, separators=(", ", ": "))),
        ("load factor", f"{run.load_factor:g}" + (" (as recorded)" if run.load_factor == 1.0 else
                                                  " (inter-arrival times divided by it)")),
        ("engine version", str(meta.get("engine_version") or summary.get("engine_version") or api.__version__)),
        ("jobs", f"{api.number_text(summary.get('jobs'))} simulated; left out in this window: "
                 + (", ".join(f"{reason}: {count:,}" for reason, count in (summary.get("rejected") or {}).items())
                    or "none")),
        *(("plugin", f"{p['name']}: {p['origin']} (sha256 {p['sha256'] or 'unknown'})")
          for p in meta.get("plugins") or ()),
        ("command", command_line(run, policy, meta.get("plugins") or ())),
    ]
    return items


def command_line(run: Run, policy: dict[str, Any], plugins: Iterable[dict[str, str]] = ()) -> str:
    """The command line that simulates this run from the uploaded file (saved under its upload name)
    and, for a Python plugin of the server's folder, its file (by name: the server's admin has it;
    an installed package's plugin needs its package installed, no flag)."""
    experiment, trace = run.experiment, run.experiment.trace
    used = getattr(experiment, "allocations_used", None)
    return api.simulate_command(
        trace.original_name or trace.download_name, policy, procs=experiment.procs, allocation=experiment.allocation,
        seed=experiment.seed, days=api.parse_days(experiment.days) if experiment.days else None,
        load_factor=run.load_factor, exact_estimates=experiment.exact_estimates,
        allocations=used.file_name if used is not None else None,
        memory_unit=(trace.header or {}).get("memory_unit"), out=f"run-{run.pk}-schedule.csv",
        policy_files=[Path(p["file"]).name for p in plugins
                      if p.get("file") and not p["origin"].startswith("entry point")])


def comment_lines(items: Iterable[tuple[str, str]], *, title: str) -> Iterator[str]:
    """The title, how to read the file, then ``# key: value`` lines (line breaks in a value become spaces)."""
    yield f"# {title}\n"
    yield '# read with pandas: pandas.read_csv(path, comment="#")\n'
    for key, value in items:
        yield f"# {key}: {' '.join(str(value).split())}\n"


def schedule_download(run: Run, kind: str = "schedule") -> StreamingHttpResponse:
    """The run's schedule CSV (``kind`` "rejected": the jobs rejected at submission) as an attachment,
    its provenance first as ``#`` lines (the web page's and the API's download alike)."""
    title = {"schedule": "SchedLab schedule: one row per job",
             "rejected": "SchedLab jobs rejected at submission: one row per job"}[kind]

    path = run.result_dir / f"{kind}.csv"

    def content() -> Iterator[bytes]:
        yield "".join(comment_lines(run_items(run), title=title)).encode()
        if not path.exists():   # a run that rejected no job: the columns, no row
            yield (",".join(api.REJECTED_COLUMNS) + "\n").encode()
            return
        with open(path, "rb") as handle:
            while chunk := handle.read(1 << 16):
                yield chunk
    response = StreamingHttpResponse(content(), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="run-{run.pk}-{kind}.csv"'
    return response


def metrics_download(experiment: Experiment) -> HttpResponse:
    """Every run's metrics (raw values; headings with units; one column per reason jobs were left out,
    counted in the run's window), the experiment's provenance and each run's policy and command first."""
    runs = list(experiment.runs.all())
    reasons = rejection_reasons([run.summary for run in runs])
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="experiment-{experiment.pk}-metrics.csv"'
    response.writelines(comment_lines(experiment_items(experiment), title="SchedLab metrics: one row per run"))
    for run in runs:
        if run.status == Run.Status.DONE:
            by_key = dict(run_items(run))
            response.write(f"# run {run.pk}: policy {by_key['policy']}; load factor {by_key['load factor']}; "
                           f"engine {by_key['engine version']}; command: {by_key['command']}\n")
    writer = csv.writer(response)
    writer.writerow(["Run", "Policy", "Sweep value", "Status", *metric_headings(reasons)])
    for run in runs:
        writer.writerow(api.safe_cells([run.pk, run.label.replace("#", "no. "),
                                        "" if run.sweep_value is None else run.sweep_value,
                                        run.status, *metric_cells(run.summary, reasons)]))
    return response


def provenance_html(runs: list[Run]) -> str:
    """The provenance of the finished ``runs`` as HTML tables (the comparison's HTML download): each
    experiment's settings once, then one row per run with its policy, load, engine and command line."""
    parts = ["<h2>Where these results come from</h2>"]
    experiments = {run.experiment_id: run.experiment for run in runs}
    for experiment in experiments.values():
        rows = "".join(f"<tr><th scope='row'>{escape(key)}</th><td>{escape(value)}</td></tr>"
                       for key, value in experiment_items(experiment))
        parts.append(f"<table class='provenance'><tbody>{rows}</tbody></table>")
    head = "<tr><th>run</th><th>policy (every parameter)</th><th>load factor</th><th>engine</th><th>jobs</th>" \
           "<th>command line</th></tr>"
    body = []
    for run in runs:
        if run.status != Run.Status.DONE:
            continue
        items = dict(run_items(run))
        body.append("<tr>" + "".join(f"<td>{escape(items[key])}</td>" for key in
                                     ("run", "policy", "load factor", "engine version", "jobs"))
                    + f"<td><code>{escape(items['command'])}</code></td></tr>")
    parts.append(f"<table class='provenance runs'><thead>{head}</thead><tbody>{''.join(body)}</tbody></table>")
    return "".join(parts)
