"""Start a study from the command line (a preset or a grid), optionally wait for it, write its CSV.

    manage.py run_study --trace ../shared/data/swf/KTH-SP2-1996-2.1-cln.swf.gz --preset paragon --csv out.csv
    manage.py run_study --trace HPC2N.swf.gz --policies fcfs,easy --grid load=0.8,1,1.2 --grid masc=5,inf
    manage.py run_study --wait-for 12          # wait for an existing study (re-checking lost workers)

The study's points are queued as one group on the configured broker; workers run them. While
waiting, the lost-worker check (webapp.experiments.tasks.reconcile) runs on the study's runs every
poll, as the study page's poll does. The last line printed is a JSON object: the study id, its
points by status and the seconds from creation to the last point's end.
"""

from __future__ import annotations

import csv
import json
import time
from pathlib import Path
from typing import Any

from engine.api import safe_cells
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from webapp.experiments.models import Run
from webapp.experiments.services import ExperimentError
from webapp.experiments.tasks import reconcile
from webapp.studies import services
from webapp.studies.models import Study
from webapp.studies.presets import PRESETS, create_preset_study
from webapp.traces.local import import_local_trace


class Command(BaseCommand):
    help = "Start a study (preset or grid) over the workers, optionally wait for it and write its CSV."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--trace", help="an SWF file on this machine (imported once, by content)")
        parser.add_argument("--owner", default="admin", help="the user owning the study (created if missing)")
        parser.add_argument("--preset", help="a preset study, e.g. paragon")
        parser.add_argument("--policies", default="", help="comma-separated presets, e.g. fcfs,easy,tss")
        parser.add_argument("--grid", action="append", default=[], metavar="PARAM=V1,V2,...",
                            help="a grid parameter and its values (load or any policy parameter); repeatable")
        parser.add_argument("--procs", type=int)
        parser.add_argument("--allocation", choices=("count", "buddy"))
        parser.add_argument("--exact-estimates", action="store_true", default=None)
        parser.add_argument("--name", default="")
        parser.add_argument("--no-wait", action="store_true", help="print the study id and return at once")
        parser.add_argument("--wait-for", type=int, metavar="STUDY", help="only wait for this existing study")
        parser.add_argument("--timeout", type=float, default=3600.0)
        parser.add_argument("--csv", help="write the study's CSV here once it is finished")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["wait_for"]:
            study = Study.objects.filter(pk=options["wait_for"]).first()
            if study is None:
                raise CommandError(f"no study {options['wait_for']}")
        else:
            study = self.create(options)
            self.stdout.write(json.dumps({"study": study.pk, "points": study.points.count()}))
            if options["no_wait"]:
                return
        wait(study, options["timeout"], self.stdout.write)
        if options["csv"]:
            with open(options["csv"], "w", newline="") as handle:
                csv.writer(handle).writerows(safe_cells(row) for row in services.csv_rows(study))
        self.stdout.write(json.dumps(outcome(study)))

    def create(self, options: dict[str, Any]) -> Study:
        if not options["trace"]:
            raise CommandError("--trace FILE is needed to start a study")
        owner, _ = get_user_model().objects.get_or_create(username=options["owner"])
        trace = import_local_trace(owner, Path(options["trace"]))
        if not trace.is_ready:
            raise CommandError(f"{options['trace']}: {trace.error}")
        overrides = {k: options[k] for k in ("procs", "allocation", "exact_estimates") if options[k] is not None}
        if options["name"]:
            overrides["name"] = options["name"]
        try:
            if options["preset"]:
                if options["preset"] not in PRESETS:
                    raise CommandError(f"unknown preset {options['preset']!r}: choose from {', '.join(PRESETS)}")
                return create_preset_study(owner, options["preset"], trace, **overrides)
            grid = services.parse_grid(dict(_grid_item(item) for item in options["grid"]))
            policies = [{"preset": p.strip()} for p in options["policies"].split(",") if p.strip()]
            return services.create_study(owner, trace=trace, policies=policies, grid=grid,
                                         **{"name": "", **overrides})
        except ExperimentError as e:
            raise CommandError(str(e)) from None


def _grid_item(item: str) -> tuple[str, str]:
    name, sep, values = item.partition("=")
    if not sep or not name.strip():
        raise CommandError(f"--grid expects PARAM=V1,V2,..., got {item!r}")
    return name.strip(), values


def wait(study: Study, timeout: float, write: Any) -> None:
    """Poll until every point is final, re-queueing points of lost workers like the page does."""
    deadline = time.monotonic() + timeout
    last = None
    while True:
        reconcile(study.experiment.runs.all())
        state = services.progress(study)
        line = f"{state['done']}/{state['total']} done, {state['counts']}"
        if line != last:
            write(line)
            last = line
        if state["finished"]:
            return
        if time.monotonic() > deadline:
            raise CommandError(f"study {study.pk} not finished after {timeout:g} s: {line}")
        time.sleep(0.5)


def outcome(study: Study) -> dict[str, Any]:
    runs = study.experiment.runs.all()
    ends = [r.finished_at for r in runs if r.finished_at]
    statuses: dict[str, int] = {}
    for run in runs:
        statuses[run.status] = statuses.get(run.status, 0) + 1
    return {
        "study": study.pk, "points": runs.count(), "statuses": statuses,
        "seconds": (max(ends) - study.experiment.created).total_seconds() if ends else None,
        "attempts": {r.pk: r.attempts for r in runs if r.attempts != 1},
        "all_done": statuses.get(Run.Status.DONE, 0) == runs.count(),
    }
