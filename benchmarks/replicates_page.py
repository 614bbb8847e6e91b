"""How fast the comparison page of a replicated comparison is once its runs are done (issue 26:
"draws in under 3 s once the data is there"): the server's time for the page (metrics table with the
intervals, verdicts) and for the forest plot's JSON, cold (forest not yet cached) and warm.

    .venv/bin/python benchmarks/replicates_page.py                       # lublin_256, five policies, weeks + shake:10
    .venv/bin/python benchmarks/replicates_page.py --trace ../shared/data/swf/KTH-SP2-1996-2.1-cln.swf.gz

Sets up a private SchedLab (SQLite + media in --data-dir, kept and reused on the next invocation),
parses the trace, creates the experiment with its replicate set through the web's own services and
runs every run inline as a worker would (webapp.experiments.tasks.run_simulation), then requests the
pages with Django's test client (server time only: the browser's drawing of the lazily loaded plots is
measured by benchmarks/dashboard_speed.py). Prints the replicate set's size, the report's size and the times.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from shared_data import SHARED_DATA  # noqa: E402 - benchmarks/shared_data.py, beside this file

REPO = Path(__file__).resolve().parents[1]
DEFAULT_TRACE = SHARED_DATA / "swf" / "lublin_256.swf.gz"
DEFAULT_POLICIES = "fcfs,easy,conservative,sjf,sorted-easy"


def setup_django(data_dir: Path) -> None:
    os.environ["SCHEDLAB_DATA_DIR"] = str(data_dir)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")
    sys.path.insert(0, str(REPO))
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def prepare(trace_path: Path, policies: list[str], spec: str) -> int:
    """The experiment's id: made and run (inline) unless the data dir has it already."""
    from django.contrib.auth import get_user_model

    from webapp.experiments.models import Experiment, Run
    from webapp.experiments.replicates import ReplicateChoice, add_replicates
    from webapp.experiments.services import create_experiment
    from webapp.experiments.tasks import run_simulation
    from webapp.traces.models import Trace
    from webapp.traces.tasks import parse_trace
    from webapp.traces.uploads import hash_and_measure

    user = get_user_model().objects.filter(username="bench").first() or \
        get_user_model().objects.create_user("bench", password="bench-password-1")
    name = f"{trace_path.name}: {','.join(policies)} x {spec}"
    existing = Experiment.objects.filter(name=name, replicate_set__report__isnull=False).first()
    if existing is not None:
        return existing.pk
    from django.conf import settings
    sha, compressed = hash_and_measure(trace_path, trace_path.name)
    relative = f"traces/{sha}.swf" + (".gz" if compressed else "")
    target = Path(settings.MEDIA_ROOT) / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(trace_path.read_bytes())
    trace = Trace.objects.create(owner=user, name=trace_path.name, sha256=sha, file=relative,
                                 original_name=trace_path.name, size_bytes=target.stat().st_size)
    parse_trace(trace.pk)
    trace.refresh_from_db()
    experiment = create_experiment(user, name=name, trace=trace, procs=None, machine=None,
                                   policies=[{"preset": p} for p in policies])
    kind, _, count = spec.rpartition(":") if spec.rsplit(":", 1)[-1].isdigit() else (spec, "", "")
    add_replicates(experiment, ReplicateChoice(kind, int(count) if count else None))
    started = time.perf_counter()
    for pk in Run.objects.filter(experiment__in=[experiment, experiment.replicate_set.runs_experiment]) \
            .order_by("pk").values_list("pk", flat=True):
        run_simulation(pk)
    print(f"ran {Run.objects.filter(experiment=experiment.replicate_set.runs_experiment).count()} replicate runs "
          f"and {experiment.runs.count()} whole-trace runs inline in {time.perf_counter() - started:.1f} s")
    return experiment.pk


def timed_get(client, url: str) -> tuple[float, int, int]:  # noqa: ANN001
    started = time.perf_counter()
    response = client.get(url)
    return time.perf_counter() - started, response.status_code, len(response.content)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trace", type=Path, default=DEFAULT_TRACE)
    parser.add_argument("--policies", default=DEFAULT_POLICIES)
    parser.add_argument("--replicates", default="weeks,shake:10")
    parser.add_argument("--data-dir", type=Path, default=Path("/tmp/schedlab-bench-replicates"))
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    args.data_dir.mkdir(parents=True, exist_ok=True)
    setup_django(args.data_dir)
    from django.contrib.auth import get_user_model
    from django.test import Client
    from django.urls import reverse

    from webapp.dashboards.plot_cache import media_path
    from webapp.experiments.models import Experiment

    pk = prepare(args.trace, args.policies.split(","), args.replicates)
    experiment = Experiment.objects.get(pk=pk)
    report = experiment.replicate_set.report
    print(f"report: {len(report['pairs'])} pairs, {len(report['runs'])} run outcomes, sets "
          + "; ".join(s["description"] for s in report["sets"]))
    import shutil
    shutil.rmtree(media_path(f"dashboards/experiments/{pk}"), ignore_errors=True)   # the forest plot cold
    client = Client()
    client.force_login(get_user_model().objects.get(username="bench"))
    page, forest = reverse("dashboards:comparison", args=[pk]), reverse("dashboards:forest", args=[pk])
    for attempt in range(args.repeat):
        seconds, status, size = timed_get(client, page)
        plot_seconds, plot_status, plot_size = timed_get(client, forest)
        print(f"{'cold' if attempt == 0 else 'warm'}: comparison page {seconds:.2f} s ({status}, {size / 1e3:.0f} kB), "
              f"forest plot JSON {plot_seconds:.2f} s ({plot_status}, {plot_size / 1e3:.0f} kB)")
    print(f"load average: {os.getloadavg()[0]:.1f} (1 min) on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
