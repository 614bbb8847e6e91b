"""How fast the comparison page is: payload in MB and seconds until every plot has rendered in Chromium.

    .venv/bin/python benchmarks/dashboard_speed.py     # CTC-SP2, five policies and the recorded run (issue 28)
    .venv/bin/python benchmarks/dashboard_speed.py --trace ../shared/data/swf/SDSC-BLUE-2000-4.2-cln.swf.gz \
        --policies fcfs,easy,conservative,sorted-easy --no-recorded --data-dir /tmp/bench --repeat 3

Targets (issue 28, on a quiet machine): every plot within 2.5 s of a cold load, the first screen within 1 s.
Sets up a private SchedLab (benchmarks/lab.py: SQLite + media in --data-dir; the simulations are kept
there and reused on the next invocation), parses the trace and simulates each policy inline (no
broker), starts gunicorn (the lab server's WSGI server) and opens the comparison page in headless
Chromium (1360 x 900):

- first: the first load after the server started (every worker cold), with the page's tables and the
  plots prebuilt as the worker builds them when an experiment's last run finishes (--no-prebuild:
  built on this request);
- cached: the following loads (a new browser context each time: BokehJS is downloaded again).

The page embeds plots lazily (one at a time, when they come within a screen of the viewport), so
these times are reported, all on the page's own clock from navigation start (performance.now()):
- first screen: what a reader sees without scrolling is drawn: the page's largest text painted
  (largest-contentful-paint: the metrics table) and every plot whose slot is in the viewport
  embedded (plots below the fold do not count);
- near plots: every plot the page started on its own (those within a screen of the viewport)
  embedded and idle (the "first screen" of earlier measurements);
- every plot: the benchmark then scrolls each plot slot into view in turn at once, as a reader
  skimming to the bottom would; the time when every slot is embedded and every Bokeh document idle
  (the page as it opens: the sections drawn on demand, the Gantt charts and the job-by-job diff, wait
  for their button);
- on demand: then the benchmark clicks every "draw" button at once; the seconds from the click until
  those sections are drawn too (and the page clock then: "everything");
- browser CPU: the renderer's main-thread CPU seconds for the whole load, clicks included (Chromium's
  ThreadTime): unlike the wall times it hardly depends on what else the machine runs.
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
sys.path.insert(0, str(REPO))

from benchmarks.lab import PASSWORD, USER, bench_user, load_text, setup_django  # noqa: E402
from benchmarks.lab import simulated_experiment, uploaded_trace  # noqa: E402
from benchmarks.shared_data import SHARED_DATA  # noqa: E402

DEFAULT_TRACE = SHARED_DATA / "swf" / "CTC-SP2-1996-3.1-cln.swf.gz"
DEFAULT_POLICIES = "fcfs,easy,conservative,sjf,sorted-easy"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update"]
NEAR_PLOTS_RENDERED = """() => {
    const slots = [...document.querySelectorAll('[data-bokeh-src]')];
    if (slots.some(s => s.dataset.bokehState === 'error')) return 'error';
    const started = slots.filter(s => s.dataset.bokehState !== 'waiting');
    return started.length > 0 && started.every(s => s.dataset.bokehState === 'done')
        && Bokeh.documents.every(d => d.is_idle);
}"""
VIEWPORT_PLOTS_RENDERED = """() => {
    const slots = [...document.querySelectorAll('[data-bokeh-src]')]
        .filter(s => s.getBoundingClientRect().top < window.innerHeight);
    if (slots.some(s => s.dataset.bokehState === 'error')) return 'error';
    return document.readyState !== 'loading' && slots.every(s => s.dataset.bokehState === 'done')
        && (slots.length === 0 || Bokeh.documents.every(d => d.is_idle))
        && slots.map(s => s.id);
}"""
#: The page clock when the largest text of the first screen was painted (the last candidate so far).
LARGEST_PAINT = """() => new Promise(resolve => {
    new PerformanceObserver(list => { const all = list.getEntries(); resolve(all[all.length - 1].startTime); })
        .observe({type: 'largest-contentful-paint', buffered: true});
    setTimeout(() => resolve(null), 2000);
})"""
ALL_PLOTS_RENDERED = """() => {
    const slots = [...document.querySelectorAll('[data-bokeh-src]')];
    if (slots.some(s => s.dataset.bokehState === 'error')) return 'error';
    return slots.length > 0 && slots.every(s => s.dataset.bokehState === 'done')
        && window.Bokeh && Bokeh.documents.length === slots.length && Bokeh.documents.every(d => d.is_idle);
}"""


def prepare_experiment(trace_path: Path, policies: list[str], with_recorded: bool) -> int:
    """The experiment's id: made (trace parsed, every policy simulated) unless the data dir has it."""
    user = bench_user()
    trace = uploaded_trace(user, trace_path)
    name = f"bench {trace_path.name} {'recorded,' if with_recorded else ''}{','.join(policies)}"
    return simulated_experiment(user, trace, name, policies, with_recorded=with_recorded).pk


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
    """One page load: seconds until the first screen, the plots near it and every plot rendered, and the
    bytes received."""
    cdp = page.context.new_cdp_session(page)
    cdp.send("Performance.enable")
    page.goto(url, wait_until="commit")
    in_view = page.wait_for_function(VIEWPORT_PLOTS_RENDERED, timeout=300_000, polling="raf").json_value()
    if in_view == "error":
        raise SystemExit("a plot failed: " + " | ".join(page.locator(".bokeh-status.error").all_inner_texts()))
    viewport_plots = page.evaluate("performance.now()") if in_view else 0.0
    largest = page.evaluate(LARGEST_PAINT)
    if largest is None:
        raise SystemExit("no largest-contentful-paint entry: the first screen drew no text")
    first_screen = max(largest, viewport_plots) / 1000.0
    page.wait_for_function(NEAR_PLOTS_RENDERED, timeout=300_000)
    near = page.evaluate("performance.now()") / 1000.0
    on_first_screen = len(in_view)
    near_plots = page.locator("[data-bokeh-state=done]").count()
    slots = page.locator("[data-bokeh-src]")
    for i in range(slots.count()):
        slots.nth(i).scroll_into_view_if_needed()
    state = page.wait_for_function(ALL_PLOTS_RENDERED, timeout=300_000).json_value()
    seconds = page.evaluate("performance.now()") / 1000.0
    if state is not True:
        raise SystemExit("a plot failed: " + " | ".join(page.locator(".bokeh-status.error").all_inner_texts()))
    on_demand = page.locator("button.show-plot").count()
    clicked = page.evaluate("performance.now()") / 1000.0
    page.evaluate("SchedLabDashboards.showAll()")
    if page.wait_for_function(ALL_PLOTS_RENDERED, timeout=300_000).json_value() is not True:
        raise SystemExit("a plot failed: " + " | ".join(page.locator(".bokeh-status.error").all_inner_texts()))
    everything = page.evaluate("performance.now()") / 1000.0
    cpu = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}.get("ThreadTime", float("nan"))
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
            "near": near, "near_plots": near_plots, "on_demand": on_demand, "demand_seconds": everything - clicked,
            "everything": everything, "cpu": cpu,
            "slots": slots.count(), "sizes": dict(by_kind), "per_plot": per_plot, "marks": marks}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trace", type=Path, default=DEFAULT_TRACE)
    parser.add_argument("--policies", default=DEFAULT_POLICIES)
    parser.add_argument("--no-recorded", action="store_true", help="without the recorded run (what really happened)")
    parser.add_argument("--data-dir", type=Path, default=REPO / "benchmarks" / "out" / "dashboard-speed")
    parser.add_argument("--workers", type=int, default=4, help="gunicorn workers")
    parser.add_argument("--repeat", type=int, default=3, help="cached loads after the first one")
    parser.add_argument("--no-prebuild", action="store_true",
                        help="leave the plot cache empty: the first load builds every plot (no worker prebuild)")
    parser.add_argument("--screenshot", type=Path, default=REPO / "test-artifacts" / "benchmark-comparison.png")
    args = parser.parse_args()

    print(load_text())
    setup_django(args.data_dir)
    from django.conf import settings

    shutil.rmtree(Path(settings.MEDIA_ROOT) / "dashboards", ignore_errors=True)  # no plot cached yet
    experiment_id = prepare_experiment(args.trace, args.policies.split(","), not args.no_recorded)
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
                print(f"{label:8s}: FIRST SCREEN ({r['on_first_screen']} of {r['slots']} plots in it) after "
                      f"{r['first_screen']:.2f} s; plots near it ({r['near_plots']}) after {r['near']:.2f} s; "
                      f"EVERY PLOT after {r['seconds']:.2f} s; on demand ({r['on_demand']} sections) "
                      f"{r['demand_seconds']:.2f} s after their click (everything {r['everything']:.2f} s); "
                      f"browser main-thread CPU {r['cpu']:.2f} s; "
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
                cpus = sorted(r["cpu"] for r in results[1:])
                print(f"cached loads: every plot min {cached[0]:.2f} s, median {cached[len(cached) // 2]:.2f} s; "
                      f"first screen min {screens[0]:.2f} s, median {screens[len(screens) // 2]:.2f} s; "
                      f"browser main-thread CPU median {cpus[len(cpus) // 2]:.2f} s")
            first = results[0]
            print(f"SUMMARY (targets, quiet machine: every plot <= 2.5 s cold, first screen <= 1 s): cold load: "
                  f"first screen {first['first_screen']:.2f} s, every plot {first['seconds']:.2f} s, browser CPU "
                  f"{first['cpu']:.2f} s; {load_text()}")
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
