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
import shutil
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.lab import bench_user, load_text, server_time, setup_django, uploaded_trace  # noqa: E402
from benchmarks.shared_data import SHARED_DATA  # noqa: E402

DEFAULT_TRACE = SHARED_DATA / "swf" / "lublin_256.swf.gz"
DEFAULT_POLICIES = "fcfs,easy,conservative,sjf,sorted-easy"


def prepare(trace_path: Path, policies: list[str], spec: str) -> int:
    """The experiment's id: made and run (inline) unless the data dir has it already."""
    import time

    from webapp.experiments.models import Experiment, Run
    from webapp.experiments.replicates import ReplicateChoice, add_replicates
    from webapp.experiments.services import create_experiment
    from webapp.experiments.tasks import run_simulation

    user = bench_user()
    name = f"{trace_path.name}: {','.join(policies)} x {spec}"
    existing = Experiment.objects.filter(name=name, replicate_set__report__isnull=False).first()
    if existing is not None:
        return existing.pk
    trace = uploaded_trace(user, trace_path)
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
    from django.test import Client
    from django.urls import reverse

    from webapp.dashboards.plot_cache import media_path
    from webapp.experiments.models import Experiment

    pk = prepare(args.trace, args.policies.split(","), args.replicates)
    experiment = Experiment.objects.get(pk=pk)
    report = experiment.replicate_set.report
    print(f"report: {len(report['pairs'])} pairs, {len(report['runs'])} run outcomes, sets "
          + "; ".join(s["description"] for s in report["sets"]))
    shutil.rmtree(media_path(f"dashboards/experiments/{pk}"), ignore_errors=True)   # the forest plot cold
    client = Client()
    client.force_login(bench_user())
    page, forest = reverse("dashboards:comparison", args=[pk]), reverse("dashboards:forest", args=[pk])
    timings = {what: server_time(client, url, repeat=args.repeat, warm=False) for what, url in
               (("comparison page", page), ("forest plot JSON", forest))}
    for attempt in range(args.repeat):
        print(f"{'cold' if attempt == 0 else 'warm'}: " + ", ".join(
            f"{what} {t.wall[attempt]:.2f} s ({t.cpu_ms[attempt]:.0f} ms CPU)" for what, t in timings.items()))
    print(", ".join(f"{what}: status {t.status}, {t.size / 1e3:.0f} kB, {t.queries} queries"
                    for what, t in timings.items()))
    print(load_text())


if __name__ == "__main__":
    main()
