"""How fast the comparison page is: payload in MB and seconds until every plot has rendered in Chromium.

    .venv/bin/python benchmarks/dashboard_speed.py                      # SDSC-BLUE-2000, four policies
    .venv/bin/python benchmarks/dashboard_speed.py --data-dir /tmp/bench --workers 4 --repeat 3

Sets up a private SchedLab (SQLite + media in --data-dir; the simulations are kept there and reused
on the next invocation), parses the trace and simulates each policy inline (no broker), starts
gunicorn (the lab server's WSGI server) and opens the comparison page in headless Chromium:

- first: the first load after the server started, with the plots prebuilt as the worker builds them
  when an experiment's last run finishes (--no-prebuild: built on this request, as before);
- cached: the following loads (a new browser context each time: BokehJS is downloaded again).

The page embeds plots lazily (one at a time, when they come within a screen of the viewport), so
two times are reported, both on the page's own clock from navigation start (performance.now()):
- first screen: every plot the page started on its own (those near the viewport) embedded, idle;
- every plot: the benchmark then scrolls each plot slot into view in turn at once, as a reader
  skimming to the bottom would; the time when every slot is embedded and every Bokeh document idle.
Payload is the bytes of every response as sent (compressed: gzip for BokehJS and the plot JSON),
with the uncompressed size in brackets, from the page's resource timing.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_TRACE = REPO.parent / "shared" / "data" / "swf" / "SDSC-BLUE-2000-4.2-cln.swf.gz"
DEFAULT_POLICIES = "fcfs,easy,conservative,sorted-easy"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update"]
USER, PASSWORD = "bench", "bench-password-1"
FIRST_SCREEN_RENDERED = """() => {
    const slots = [...document.querySelectorAll('[data-bokeh-src]')];
    if (slots.some(s => s.dataset.bokehState === 'error')) return 'error';
    const started = slots.filter(s => s.dataset.bokehState !== 'waiting');
    return started.length > 0 && started.every(s => s.dataset.bokehState === 'done')
        && Bokeh.documents.every(d => d.is_idle);
}"""
ALL_PLOTS_RENDERED = """() => {
    const slots = [...document.querySelectorAll('[data-bokeh-src]')];
    if (slots.some(s => s.dataset.bokehState === 'error')) return 'error';
    return slots.length > 0 && slots.every(s => s.dataset.bokehState === 'done')
        && window.Bokeh && Bokeh.documents.length === slots.length && Bokeh.documents.every(d => d.is_idle);
}"""


def setup_django(data_dir: Path) -> None:
    os.environ["SCHEDLAB_DATA_DIR"] = str(data_dir)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")
    sys.path.insert(0, str(REPO))
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def prepare_experiment(trace_path: Path, policies: list[str]) -> int:
    """The experiment's id: made (trace parsed, every policy simulated) unless the data dir has it."""
    from django.contrib.auth import get_user_model

    from webapp.experiments.models import Experiment, Run
    from webapp.experiments.services import create_experiment
    from webapp.experiments.tasks import run_simulation
    from webapp.traces.models import Trace
    from webapp.traces.tasks import parse_trace
    from webapp.traces.uploads import hash_and_measure

    user = get_user_model().objects.filter(username=USER).first() or get_user_model().objects.create_user(USER, password=PASSWORD)
    name = f"bench {trace_path.name} {','.join(policies)}"
    existing = Experiment.objects.filter(owner=user, name=name).first()
    if existing and all(r.status == Run.Status.DONE for r in existing.runs.all()):
        print(f"reusing experiment {existing.pk} from the data dir")
        return existing.pk
    sha, compressed = hash_and_measure(trace_path, trace_path.name)
    trace = Trace.objects.filter(owner=user, sha256=sha, status=Trace.Status.READY).first()
    if trace is None:
        from django.conf import settings

        relative = f"traces/{sha}.swf" + (".gz" if compressed else "")
        target = Path(settings.MEDIA_ROOT) / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(trace_path.read_bytes())
        trace = Trace.objects.create(owner=user, name=trace_path.name, sha256=sha, file=relative,
                                     original_name=trace_path.name, size_bytes=target.stat().st_size)
        started = time.perf_counter()
        parse_trace(trace.pk)
        trace.refresh_from_db()
        print(f"parsed {trace_path.name}: {trace.status}, {time.perf_counter() - started:.1f} s")
    experiment = create_experiment(user, name=name, trace=trace, procs=None, machine=None,
                                   policies=[{"preset": p} for p in policies])
    for run in experiment.runs.order_by("position"):
        started = time.perf_counter()
        run_simulation(run.pk)
        run.refresh_from_db()
        print(f"simulated {run.label}: {run.status} in {time.perf_counter() - started:.1f} s {run.error}")
    return experiment.pk


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_gunicorn(port: int, workers: int) -> subprocess.Popen:
    gunicorn = Path(sys.executable).with_name("gunicorn")
    process = subprocess.Popen(
        [str(gunicorn), "webapp.wsgi", "--preload", "-b", f"127.0.0.1:{port}", "-w", str(workers), "--timeout", "300",
         "--log-level", "warning"], cwd=REPO, env=os.environ.copy())
    for _ in range(200):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return process
        except OSError:
            time.sleep(0.1)
    process.kill()
    raise SystemExit("gunicorn did not start")


def measure(page, url: str) -> dict:  # noqa: ANN001
    """One page load: seconds until the first screen and every plot rendered, and the bytes received."""
    page.goto(url)
    page.wait_for_function(FIRST_SCREEN_RENDERED, timeout=300_000)
    first_screen = page.evaluate("performance.now()") / 1000.0
    on_first_screen = page.locator("[data-bokeh-state=done]").count()
    slots = page.locator("[data-bokeh-src]")
    for i in range(slots.count()):
        slots.nth(i).scroll_into_view_if_needed()
    state = page.wait_for_function(ALL_PLOTS_RENDERED, timeout=300_000).json_value()
    seconds = page.evaluate("performance.now()") / 1000.0
    if state is not True:
        raise SystemExit("a plot failed: " + " | ".join(page.locator(".bokeh-status.error").all_inner_texts()))
    sizes = page.evaluate("""() => performance.getEntriesByType('navigation').concat(performance.getEntriesByType('resource'))
        .map(e => [e.name.split('?')[0], e.encodedBodySize, e.decodedBodySize])""")
    by_kind: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for name, sent, size in sizes:
        kind = "plot JSON" if name.endswith(".json") else "BokehJS" if "/static/bokeh/" in name else "page + other"
        by_kind[kind][0] += sent
        by_kind[kind][1] += size
    per_plot = page.evaluate("""() => performance.getEntriesByType('resource')
        .filter(e => e.name.includes('/plots/'))
        .map(e => [e.name.split('/plots/')[1].split('.json')[0], e.responseEnd - e.startTime, e.encodedBodySize])""")
    marks = page.evaluate("""() => performance.getEntriesByType('mark')
        .filter(m => m.name.startsWith('bokeh-')).map(m => [m.name, m.startTime])""")
    return {"seconds": seconds, "first_screen": first_screen, "on_first_screen": on_first_screen,
            "slots": slots.count(), "sizes": dict(by_kind), "per_plot": per_plot, "marks": marks}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trace", type=Path, default=DEFAULT_TRACE)
    parser.add_argument("--policies", default=DEFAULT_POLICIES)
    parser.add_argument("--data-dir", type=Path, default=REPO / "benchmarks" / "out" / "dashboard-speed")
    parser.add_argument("--workers", type=int, default=4, help="gunicorn workers")
    parser.add_argument("--repeat", type=int, default=3, help="cached loads after the first one")
    parser.add_argument("--no-prebuild", action="store_true",
                        help="leave the plot cache empty: the first load builds every plot (no worker prebuild)")
    parser.add_argument("--screenshot", type=Path, default=REPO / "test-artifacts" / "benchmark-comparison.png")
    args = parser.parse_args()

    args.data_dir.mkdir(parents=True, exist_ok=True)
    setup_django(args.data_dir.resolve())
    from django.conf import settings

    shutil.rmtree(Path(settings.MEDIA_ROOT) / "dashboards", ignore_errors=True)  # no plot cached yet
    experiment_id = prepare_experiment(args.trace, args.policies.split(","))
    if not args.no_prebuild:
        from webapp.dashboards.views import prebuild_comparison
        from webapp.experiments.models import Experiment

        started = time.perf_counter()
        prebuild_comparison(Experiment.objects.get(pk=experiment_id))  # what the worker does after the last run
        print(f"prebuilt the comparison plots (as the worker does) in {time.perf_counter() - started:.1f} s")
    port = free_port()
    server = start_gunicorn(port, args.workers)
    base = f"http://127.0.0.1:{port}"
    try:
        from playwright.sync_api import sync_playwright

        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            context = browser.new_context(viewport={"width": 1360, "height": 900})
            page = context.new_page()
            page.goto(base + "/accounts/login/")
            page.fill("#id_username", USER)
            page.fill("#id_password", PASSWORD)
            page.click("button[type=submit]")
            page.wait_for_url(lambda u: "/accounts/login/" not in u)
            logged_in = context.storage_state()
            context.close()
            url = f"{base}/dashboards/experiments/{experiment_id}/"
            results = []
            for i in range(1 + args.repeat):
                # A new browser context each time: an empty HTTP cache, so BokehJS is downloaded and
                # counted every time, as on a first visit.
                context = browser.new_context(viewport={"width": 1360, "height": 900}, storage_state=logged_in)
                page = context.new_page()
                results.append(measure(page, url))
                label = "first" if i == 0 else f"cached {i}"
                r = results[-1]
                sent = sum(v[0] for v in r["sizes"].values()) / 1e6
                size = sum(v[1] for v in r["sizes"].values()) / 1e6
                parts = ", ".join(f"{k} {v[0] / 1e6:.2f} [{v[1] / 1e6:.2f}]" for k, v in sorted(r["sizes"].items()))
                print(f"{label:8s}: first screen ({r['on_first_screen']} of {r['slots']} plots) after "
                      f"{r['first_screen']:.2f} s; every plot after {r['seconds']:.2f} s; "
                      f"payload {sent:.2f} MB sent [{size:.2f} MB uncompressed] ({parts})")
                if i < args.repeat:
                    context.close()
            for label, r in (("first", results[0]), ("last", results[-1])):
                print(f"per plot ({label} load): JSON request time and gzipped size: " + ", ".join(
                    f"{n} {ms / 1000:.2f} s {size / 1e6:.2f} MB" for n, ms, size in r["per_plot"]))
                print("  page clock when each plot's JSON arrived / was embedded: " + ", ".join(
                    f"{name.split(':plot-')[0].replace('bokeh-', '')} {name.split(':plot-')[1]} {t / 1000:.2f} s"
                    for name, t in sorted(r["marks"], key=lambda m: m[1])))
            if len(results) > 1:
                cached = sorted(r["seconds"] for r in results[1:])
                screens = sorted(r["first_screen"] for r in results[1:])
                print(f"cached loads: every plot min {cached[0]:.2f} s, median {cached[len(cached) // 2]:.2f} s; "
                      f"first screen min {screens[0]:.2f} s, median {screens[len(screens) // 2]:.2f} s")
            args.screenshot.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(args.screenshot), full_page=True)
            print(f"screenshot: {args.screenshot}")
            context.close()
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
