"""A preview on a Slurm or PBS site's own files (issue 24 §4): an experiment whose runs replay the trace
under the site's scheduler (the ``slurm`` or ``pbs`` policy) on one pool of its CPUs —

* recorded: what happened (when the trace records start times);
* current: the site's files as uploaded;
* proposed: an edited copy of them (the common keys in a form, the rest as text), added with the
  first proposal and run again at each later one.

A sweep of one of the common keys (its label, e.g. ``bf_max_job_test``, ``long MaxTime``, ``normal
MaxJobsPU``, ``workq max_run``, and the values as the files write them) makes one current and one
proposed run per value, each with the key set to the value in a copy of its side's files; the page
then shows every value at once as the ordinary preview's sweep does (webapp.preview.page.sweep_overview).

The page reads back, per partition (queue), account and user, the jobs and mean wait recorded /
current / proposed, and what held the jobs in the scheduler's own words with the jobs and hours
each reason held (engine.metrics.sitepending, in each run's summary).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any

import pandas as pd
from django.db import transaction

from engine.api import (
    SITE_FILES,
    SiteKey,
    WorkloadError,
    common_keys,
    error_line,
    site_from_texts,
    site_reading,
    split_values,
    sweep_key,
    with_change,
)
from webapp.experiments.models import CURRENT, PROPOSED, Experiment, Run
from webapp.experiments.services import (
    ExperimentError,
    PlannedRun,
    add_runs,
    checked_room,
    rerun,
    with_recorded_run,
)
from webapp.experiments.tasks import dispatch_later, remove_results
from webapp.preview.models import SitePreview
from webapp.preview.services import RECORDED, PreviewError, idle_proposed_runs

#: the most characters a site file may have (a slurm.conf of a large site is a few hundred kB)
MAX_FILE_CHARS = 2_000_000
#: the groupings of the results tables: (heading, the trace's column)
GROUPS = (("partition", "queue_name"), ("account", "account"), ("user", "user"))


def checked_site(kind: str, texts: dict[str, str]) -> Any:
    """The site the texts describe, or PreviewError with one line naming file, line and key."""
    for name, text in texts.items():
        if len(text) > MAX_FILE_CHARS:
            raise PreviewError(f"{name}: more than {MAX_FILE_CHARS:,} characters")
    try:
        return site_from_texts(kind, texts)
    except WorkloadError as error:
        raise PreviewError(error_line(error)) from None


def site_cpus(kind: str, site: Any, trace: Any) -> int:
    """The pool the runs share: slurm.conf's CPUs; for PBS (print server names no nodes) the trace's machine."""
    if kind == "slurm" and site.conf.total_cpus:
        return int(site.conf.total_cpus)
    return int(trace.workload().metadata.get("procs") or 0)


@dataclass(frozen=True)
class Sweep:
    """A sweep as asked: the key's label and the values' text ("100, 500, 1000")."""

    label: str = ""
    values: str = ""


def create_site_preview(owner: Any, *, name: str, trace: Any, kind: str, texts: dict[str, str],
                        shared: bool = False, cpus: int | None = None, sweep: Sweep = Sweep()) -> SitePreview:
    """Check the files (and the sweep: every value written into them must read), then store the
    experiment, the site preview and its recorded and current runs (one per swept value) in one
    transaction. Raises PreviewError (one line); nothing is stored then."""
    texts = {key: normalised(value) for key, value in texts.items() if key in SITE_FILES.get(kind, ()) and value.strip()}
    site = checked_site(kind, texts)
    cpus = cpus or site_cpus(kind, site, trace)
    if cpus < 1:
        raise PreviewError("the machine's size is unknown: the site's files and the trace name no CPUs")
    key, values = swept(kind, site, sweep)
    checked_values(kind, texts, key, values)
    planned = with_recorded_run(trace, [PlannedRun(run_label(f"current: {kind} as configured", key, value),
                                                   {"preset": kind, "params": {}}, value, CURRENT)
                                        for value in values or [None]])
    try:
        checked_room(owner, len(planned))
    except ExperimentError as error:
        raise PreviewError(str(error)) from None
    with transaction.atomic():
        experiment = Experiment.objects.create(owner=owner, name=name, shared=shared, trace=trace, procs=cpus,
                                               sweep_param=key.label if key else "", sweep_values=values)
        preview = SitePreview.objects.create(experiment=experiment, kind=kind, current=texts)
        add_runs(experiment, planned)
    return preview


def swept(kind: str, site: Any, sweep: Sweep) -> tuple[SiteKey | None, list[str]]:
    """The key a sweep sets and its values (None, [] without a sweep), or PreviewError."""
    if not sweep.label.strip():
        if sweep.values.strip():
            raise PreviewError("sweep: name the key to sweep (e.g. bf_max_job_test) or leave the values empty")
        return None, []
    try:
        key = sweep_key(site, sweep.label)
    except WorkloadError as error:
        raise PreviewError(error_line(error)) from None
    values = split_values(sweep.values)
    if not values:
        raise PreviewError(f"sweep over {key.label}: give at least one value, as {key.file} writes it")
    return key, values


def checked_values(kind: str, texts: dict[str, str], key: SiteKey | None, values: list[str]) -> None:
    """PreviewError (naming file, line and key) unless the files read with the key at every value."""
    for value in values if key is not None else []:
        try:
            changed = with_change(texts, key, value)
        except WorkloadError as error:
            raise PreviewError(f"sweep value {value}: {error_line(error)}") from None
        try:
            checked_site(kind, changed)
        except PreviewError as error:
            raise PreviewError(f"sweep value {value}: {error}") from None


def run_label(side: str, key: SiteKey | None, value: Any) -> str:
    """ "current: slurm as configured (bf_max_job_test=100)"; without a sweep the side alone."""
    return (f"{side} ({key.label}={value})" if key is not None and value is not None else side)[:300]


def normalised(text: str) -> str:
    """A file as browsers post it (CRLF) or uploads give it, with one final newline."""
    return text.replace("\r\n", "\n").rstrip() + "\n"


def propose(preview: SitePreview, name: str, texts: dict[str, str]) -> int:
    """Store the proposed files and run the proposed side (added the first time, run again after).
    Refused while a proposed run is unfinished. Returns how many runs were queued."""
    texts = {key: normalised(value) for key, value in texts.items() if value.strip()}
    checked_site(preview.kind, texts)
    experiment = preview.experiment
    key, values = preview.swept_key(), list(experiment.sweep_values)
    checked_values(preview.kind, texts, key, values)
    runs = idle_proposed_runs(experiment)
    with transaction.atomic():
        SitePreview.objects.filter(pk=preview.pk).update(proposed=texts, proposed_name=name)
        preview.proposed, preview.proposed_name = texts, name
        if runs:
            for run in runs:
                Run.objects.filter(pk=run.pk).update(label=run_label(side_label(preview, PROPOSED), key, run.sweep_value))
            return sum(rerun(run) for run in runs)
        try:
            checked_room(experiment.owner, len(values) or 1)
        except ExperimentError as error:
            raise PreviewError(str(error)) from None
        last = experiment.runs.count()
        Run.objects.bulk_create(
            Run(experiment=experiment, position=last + index, label=run_label(side_label(preview, PROPOSED), key, value),
                policy=preview.policy(), sweep_value=value, queues=PROPOSED)
            for index, value in enumerate(values or [None]))
        dispatch_later()
    return len(values) or 1


def side_label(preview: SitePreview, side: str) -> str:
    """A side's run label before the swept value: "current: slurm as configured", "proposed: NAME",
    with ", calibrated" while a calibration is applied."""
    label = f"current: {preview.kind} as configured" if side == CURRENT else f"proposed: {preview.proposed_name}"
    return label + (", calibrated" if preview.calibrated else "")


def add_sweep(preview: SitePreview, sweep: Sweep) -> int:
    """Sweep a key of an existing site preview: its current and proposed runs (and those of an earlier
    sweep) are replaced by one per value of each side, queued; the recorded run stays. The key and every
    value must read in both sides' files; refused while a current or proposed run is unfinished (they
    would be replaced under it). Raises PreviewError (one line); nothing changes then. Returns how many
    runs were queued."""
    experiment = preview.experiment
    site = checked_site(preview.kind, preview.current)
    key, values = swept(preview.kind, site, sweep)
    if key is None:
        raise PreviewError("sweep: name the key to sweep (e.g. bf_max_job_test) and its values")
    checked_values(preview.kind, preview.current, key, values)
    if preview.proposed:
        try:
            checked_values(preview.kind, preview.proposed, key, values)
        except PreviewError as error:
            raise PreviewError(f"the proposal: {error}") from None
    old = [run for run in experiment.runs.all() if run.queues]
    busy = [run.label for run in old if not run.is_final]
    if busy:
        raise PreviewError(f"{busy[0]} is still running: wait for it or cancel it first")
    sides = [(side, side_label(preview, side)) for side in (CURRENT, PROPOSED) if side == CURRENT or preview.proposed]
    with transaction.atomic():
        Run.objects.filter(pk__in=[run.pk for run in old]).delete()
        try:
            checked_room(experiment.owner, len(sides) * len(values))
        except ExperimentError as error:     # the deletion is rolled back with the transaction
            raise PreviewError(str(error)) from None
        Experiment.objects.filter(pk=experiment.pk).update(sweep_param=key.label, sweep_values=values)
        experiment.sweep_param, experiment.sweep_values = key.label, values
        last = max((run.position for run in experiment.runs.all()), default=-1) + 1
        Run.objects.bulk_create(
            Run(experiment=experiment, position=last + index, label=run_label(label, key, value),
                policy=preview.policy(), sweep_value=value, queues=side)
            for index, (side, label, value) in enumerate((side, label, value) for side, label in sides
                                                         for value in values))
        transaction.on_commit(lambda: [remove_results(run) for run in old])
        dispatch_later()
    return len(sides) * len(values)


# -- the proposal: the form's keys and the texts ------------------------------------------------------


@dataclass(frozen=True)
class Change:
    key: SiteKey
    current: str
    proposed: str


def keys_of(preview: SitePreview, side: str = CURRENT) -> list[SiteKey]:
    return common_keys(preview.site(side))


def apply_changes(base: dict[str, str], keys: list[SiteKey], values: dict[int, str]) -> dict[str, str]:
    """``base`` with every key whose value differs from its ``Key.value`` set (``values`` by key index)."""
    texts = dict(base)
    for index, key in enumerate(keys):
        value = values.get(index)
        if value is not None and value.strip() != key.value:
            try:
                texts = with_change(texts, key, value)
            except WorkloadError as error:
                raise PreviewError(error_line(error)) from None
    return texts


def text_diff(current: dict[str, str], proposed: dict[str, str], names: tuple[str, ...]) -> str:
    """A unified diff, file by file, of the current and proposed texts."""
    parts = []
    for name in names:
        a, b = current.get(name, ""), proposed.get(name, "")
        parts += difflib.unified_diff(a.splitlines(keepends=True), b.splitlines(keepends=True),
                                      fromfile=f"{name} (current)", tofile=f"{name} (proposed)", n=1)
    return "".join(parts)


def changed_keys(current: Any, proposed: Any) -> list[Change]:
    """The form's keys whose value differs between the two sites."""
    before = {(k.file, k.scope, k.key): k.value for k in common_keys(current)}
    after = {(k.file, k.scope, k.key): k for k in common_keys(proposed)}
    return [Change(key, before.get(ident, "—"), key.value) for ident, key in after.items() if before.get(ident) != key.value]


# -- what SchedLab read of the files ----------------------------------------------------------------


def site_readings(preview: SitePreview) -> dict[str, Any]:
    """The page's "What SchedLab read from your files" (engine.api.site_reading) per side: the current files,
    and the proposal when SchedLab reads it differently (then only its lines that differ, and those of the
    current files it no longer has). Each side: its description as groups (a line and the lines indented
    under it), whether QOS and association limits hold, the settings read but not followed as (setting,
    why) and the keys outside the model; ``warned``: whether the side has its own warning box at the top
    (the proposal's only when its warnings differ from the current files'). ``readings_error`` when
    stored files no longer read."""
    sides = [(CURRENT, "your files")] + ([(PROPOSED, f"the proposal “{preview.proposed_name}”")] if preview.proposed else [])
    readings: list[dict[str, Any]] = []
    for side, title in sides:
        try:
            reading = site_reading(preview.site(side))
        except WorkloadError as error:
            return {"readings": readings, "readings_error": f"{title}: {error_line(error)}"}
        first = readings[0]["reading"] if readings else None
        if first is not None and reading == first:
            continue                                   # the proposal reads as the current files do
        groups = _grouped(reading.lines)
        if first is not None:      # the proposal's lines that differ, each under its heading line
            before = {line.strip() for line in first.lines}
            groups = [(line, [sub for sub in subs if sub not in before]) for line, subs in groups
                      if line not in before or any(sub not in before for sub in subs)]
        warned = first is None or (reading.limits_enforced, reading.unfollowed) != (first.limits_enforced, first.unfollowed)
        readings.append({"side": side, "title": title, "reading": reading, "groups": groups,
                         "gone": [] if first is None else [line.strip() for line in first.lines if line not in reading.lines],
                         "unfollowed": [_setting_and_why(item) for item in reading.unfollowed], "warned": warned})
    if len(readings) == 2 and not readings[1]["warned"]:
        readings[0]["title"] = f"your files and {readings[1]['title']}"
    return {"readings": readings}


def _grouped(lines: list[str]) -> list[tuple[str, list[str]]]:
    """describe_site's lines as (line, the lines indented under it)."""
    groups: list[tuple[str, list[str]]] = []
    for line in lines:
        if line.startswith("  ") and groups:
            groups[-1][1].append(line.strip())
        else:
            groups.append((line.strip(), []))
    return groups


def _setting_and_why(item: str) -> tuple[str, str]:
    """ "SchedulerParameters bf_continue (no effect: ...)" -> ("SchedulerParameters bf_continue", "no effect: ...")."""
    setting, _, why = item.partition(" (")
    return setting, why[:-1] if why.endswith(")") else why


# -- reading it back ----------------------------------------------------------------------------------


def side_runs(preview: SitePreview, value: Any = None, runs: list[Run] | None = None) -> dict[str, Run]:
    """The recorded run and the current and proposed runs at the swept ``value`` (without a sweep: the
    only ones), by side; ``runs``: the experiment's, when already read."""
    found: dict[str, Run] = {}
    swept = bool(preview.experiment.sweep_param)
    for run in preview.experiment.runs.all() if runs is None else runs:
        if (run.policy or {}).get("preset") == RECORDED:
            found.setdefault(RECORDED, run)
        elif run.queues and (not swept or run.sweep_value == value):
            found.setdefault(run.queues, run)
    return found


def wait_tables(preview: SitePreview, runs: dict[str, Run]) -> dict[str, list[dict[str, Any]]]:
    """Per partition (queue), account and user: jobs, and mean wait in minutes recorded / current /
    proposed (the finished runs' stored schedules)."""
    workload = preview.experiment.trace.workload()
    jobs = workload.jobs
    names = workload.metadata.get("user_names", {})
    labels = pd.DataFrame({"job_id": jobs["job_id"].to_numpy()})
    for heading, column in GROUPS:
        values = jobs[column].astype(str) if column in jobs else pd.Series([""] * len(jobs))
        labels[heading] = [names.get(v, v) for v in values] if column == "user" else values.to_numpy()
    waits = {}
    for side, run in runs.items():
        if run.status == Run.Status.DONE:
            frame = run.load_schedule()
            waits[side] = pd.Series((frame["start"] - frame["submit"]).to_numpy(), index=frame["job_id"].to_numpy())
    tables: dict[str, list[dict[str, Any]]] = {}
    for heading, _ in GROUPS:
        rows = []
        for value, group in labels.groupby(heading, sort=True):
            row: dict[str, Any] = {"name": value or "(none)", "jobs": len(group)}
            for side in (RECORDED, CURRENT, PROPOSED):
                if side in waits:
                    wait = waits[side].reindex(group["job_id"].to_numpy()).dropna()
                    row[side] = float(wait.mean()) / 60 if len(wait) else None
            rows.append(row)
        tables[heading] = rows
    return tables


def site_results(preview: SitePreview, runs: dict[str, Run]) -> dict[str, Any]:
    """What the page and its downloads show of ``runs`` (side_runs'): the sides there are, whether
    every run is done, and once some is, the waits per partition, account and user and the pending
    reasons, each row's ``values`` in the order of ``sides`` (``missing``: a stored schedule is gone)."""
    sides = [side for side in (RECORDED, CURRENT, PROPOSED) if side in runs]
    done = [run for run in runs.values() if run.status == Run.Status.DONE]
    context: dict[str, Any] = {"sides": sides, "all_done": len(done) == len(runs)}
    if not done:
        return context
    try:
        context["tables"] = [(heading, [{**row, "values": [row.get(side) for side in sides]} for row in rows])
                             for heading, rows in wait_tables(preview, runs).items()]
    except OSError:
        context["missing"] = True
    context["pending"] = [{"reason": row["reason"], "values": [row.get(side) for side in sides]}
                          for row in pending_table(runs)]
    context["refused"] = refused_jobs(runs)
    return context


#: jobs refused at submission named on the page per side (all of them in the run's rejected CSV)
LISTED_REFUSED = 50


def refused_jobs(runs: dict[str, Run]) -> list[dict[str, Any]]:
    """Per replayed side that refused jobs at submission: how many, and the first LISTED_REFUSED named
    (id, user, queue, what they asked, the scheduler's message and the setting)."""
    parts = []
    for side in (CURRENT, PROPOSED):
        run = runs.get(side)
        rejected = run.load_rejected() if run is not None and run.status == Run.Status.DONE else None
        if rejected is not None and len(rejected):
            parts.append({"side": side, "run": run, "count": len(rejected),
                          "jobs": rejected.head(LISTED_REFUSED).to_dict("records")})
    return parts


def pending_table(runs: dict[str, Run]) -> list[dict[str, Any]]:
    """Per reason: jobs held and job-hours recorded / current / proposed (from each run's summary)."""
    found: dict[str, dict[str, Any]] = {}
    for side in (RECORDED, CURRENT, PROPOSED):
        run = runs.get(side)
        for row in ((run.summary or {}).get("site_pending") or []) if run is not None else []:
            entry = found.setdefault(row["reason"], {"reason": row["reason"]})
            entry[side] = row
    return list(found.values())
