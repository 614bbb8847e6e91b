"""Load: separate accounts on `make run`'s real stack while its worker simulates (issue 27's figures).

    .venv/bin/python benchmarks/load.py [--users 50] [--seconds 60] [--think 1.0] [--trace NAME.swf.gz]

Starts the application exactly as `make run` does (python -m webapp.run: gunicorn with its processes and
threads from webapp/gunicorn_conf.py, a quick Celery worker, a simulation worker with one process per core, the fair dispatcher,
SQLite, the filesystem broker) with its default settings, in a temporary data directory.

Setup, before the clock:
1. the admin uploads a 20,000-job sacct dump with one job on n[0001-2048] (benchmarks/wide_text.py's,
   4.8 MB), the quick worker's first work: the peak resident memory (VmHWM, reset just before) of the
   worker process that parsed it, the parse time and the parsed cache's size are printed;
2. the admin uploads the trace (default KTH-SP2-1996 from the shared data), shared, and a shared
   experiment of six policies on it, and waits for its runs;
3. a long simulation (plan1 over 2,000 synthetic jobs at three times their load) keeps a simulation
   slot busy through the whole measurement;
4. `--users` accounts are created, each with an API token of its own, and each logged in (a session of
   its own);
5. cold builds, unloaded: the comparison of all six runs (nobody asked for it, nothing prebuilt it):
   its page and each of its plots, timed one by one.

Then each account is a thread with its own keep-alive connection for `--seconds` (at most 120). Once, at
a random moment in the first half, it uploads a small SWF of its own (distinct content), follows its
status and, once it is parsed, opens its characterization plots (the first request for them: the
quick worker builds them after the parse, else this request does). The
first `--new-comparisons` accounts (default 10) also open once, at a random moment, a comparison of a
selection of the shared runs that is theirs alone (the page and its plots are built at these
requests: cold). Otherwise it draws a request: a page (trace
list, experiment list, the experiment, its comparison, the usage page), the API (the experiment's
status, the trace list), one of the comparison's plots (built already), a download (the trace file, a
run's schedule.csv, the metrics.csv); and waits `--think` seconds on average (exponential, seeded).

Prints, per kind and over every request: count, p50/p95/p99/max; errors (status >= 300, no answer);
the issue's targets (p95 under 1 s over every request, 0 errors) met or not; the cold builds; how
long the uploads took to be parsed; the CPU time of the web server, the workers and this client; the
load average before and after. Nothing here is a test: the figures depend on the machine.
"""

from __future__ import annotations

import argparse
import http.client
import itertools
import os
import random
import re
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.shared_data import SHARED_DATA  # noqa: E402
from benchmarks.wide_text import sacct_dump  # noqa: E402
from tests.app_process import PASSWORD, App, children_of, multipart, wait_for  # noqa: E402
from tests.synthetic import synthetic_swf  # noqa: E402
from webapp.run import group_members  # noqa: E402

MAX_SECONDS = 120
POLICIES = ["fcfs", "easy", "conservative", "sjf", "firstfit", "sorted-easy"]
P95_TARGET = 1.0  # seconds, over every request (issue 27)
COLD = "cold: "  # kinds whose requests are the first for what they answer (nobody viewed it before)


class Browser:
    """One account: a keep-alive connection, the session cookie of its login and its API token
    (made with the account: the token endpoint allows ten requests a minute from one address)."""

    def __init__(self, port: int, username: str) -> None:
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        self.username = username
        self.cookies: dict[str, str] = {}
        self.token = ""

    def request(self, method: str, path: str, body: bytes | None = None, headers: dict | None = None
                ) -> tuple[int, bytes]:
        headers = {"Accept-Encoding": "gzip", **(headers or {})}
        if self.cookies:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        try:
            self.connection.request(method, path, body=body, headers=headers)
            response = self.connection.getresponse()
        except (http.client.HTTPException, OSError):
            self.connection.close()  # the server closed a kept-alive connection: once more on a new one
            self.connection.request(method, path, body=body, headers=headers)
            response = self.connection.getresponse()
        data = response.read()
        for value in response.headers.get_all("Set-Cookie") or []:
            name, _, rest = value.partition("=")
            self.cookies[name.strip()] = rest.split(";", 1)[0]
        return response.status, data

    def api(self, method: str, path: str, body: bytes | None = None, content_type: str = "") -> tuple[int, bytes]:
        headers = {"Authorization": f"Token {self.token}", "Accept": "application/json"}
        if content_type:
            headers["Content-Type"] = content_type
        return self.request(method, path, body, headers)

    def log_in(self) -> None:
        self.request("GET", "/accounts/login/")
        form = urlencode({"username": self.username, "password": PASSWORD,
                          "csrfmiddlewaretoken": self.cookies["csrftoken"]})
        status, _ = self.request("POST", "/accounts/login/", form.encode(),
                                 {"Content-Type": "application/x-www-form-urlencoded"})
        assert status == 302, f"{self.username}'s login answered {status}"


# --------------------------------------------------------------------------- the quick worker's memory


def quick_worker_processes(app: App) -> list[int]:
    leader = app.worker_pid("quick")
    return [pid for pid in group_members(leader)]


def status_field(pid: int, name: str) -> int:
    """A /proc/PID/status field in KiB (VmHWM: peak resident memory, VmRSS: now)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(name + ":"):
            return int(line.split()[1])
    return 0


def sacct_memory(app: App, tmp: Path) -> None:
    """Step 1: the quick worker parsing the wide sacct dump, its first work."""
    dump = tmp / "sacct-wide.txt"
    dump.write_text(sacct_dump(20_000, wide=True))
    wait_for("the quick worker's pool process", lambda: len(quick_worker_processes(app)) > 1, timeout=120)
    time.sleep(2)  # its imports done
    processes = quick_worker_processes(app)
    before = {pid: status_field(pid, "VmRSS") for pid in processes}
    for pid in processes:
        Path(f"/proc/{pid}/clear_refs").write_text("5")  # VmHWM := VmRSS (Linux)
    sent = time.monotonic()
    trace = app.upload(dump, "wide sacct dump")
    waited = time.monotonic() - sent
    peaks = {pid: status_field(pid, "VmHWM") for pid in processes}
    with sqlite3.connect(app.data / "schedlab.sqlite3", timeout=30) as db:
        cache, parse_seconds = db.execute("SELECT cache, parse_seconds FROM traces_trace WHERE id = ?",
                                          (trace,)).fetchone()
    cache_mb = (app.data / "media" / cache).stat().st_size / 1e6
    worker = max(peaks, key=lambda pid: peaks[pid] - before[pid])
    print(f"sacct dump of 20,000 jobs, one on n[0001-2048] ({dump.stat().st_size / 1e6:.1f} MB): parsed in "
          f"{parse_seconds:.1f} s ({waited:.1f} s from upload to ready), cache {cache_mb:.1f} MB; peak memory of "
          f"the quick worker process that parsed it {peaks[worker] / 1024:.0f} MiB (it held "
          f"{before[worker] / 1024:.0f} MiB before; every quick-worker process: "
          f"{', '.join(f'{peaks[p] / 1024:.0f}' for p in processes)} MiB)", flush=True)


# --------------------------------------------------------------------------- setup


@dataclass
class Fixture:
    trace: int
    experiment: int
    runs: list[int]
    plots: list[str]  # the shared comparison's plot URLs (built once: warm)
    long_run: int
    selections: list[tuple[int, ...]] = field(default_factory=list)  # one per account: its own comparison


def shared_experiment(app: App, trace_path: Path, tmp: Path) -> Fixture:
    trace = app.upload(trace_path, name=trace_path.name, shared="on")
    experiment = app.call("POST", "/api/experiments/", {"trace": trace, "shared": True, "name": "shared",
                                                        "policies": [{"preset": p} for p in POLICIES]})
    wait_for("the shared experiment's runs",
             lambda: app.call("GET", f"/api/experiments/{experiment['id']}/")["finished"], timeout=1800, every=2)
    admin = Browser(app.port, "admin")
    admin.log_in()
    _, page = admin.request("GET", f"/dashboards/experiments/{experiment['id']}/")
    plots = sorted({u.replace("&amp;", "&") for u in re.findall(r'data-bokeh-src="([^"]+)"', page.decode())})
    assert plots, "the comparison page lists no plot"
    for url in plots:  # built already by the worker's prebuild, or here (as the first visitor would)
        admin.request("GET", url)
    long_run = app.start_long_run(tmp)
    runs = list(experiment["runs"])
    selections = [s for size in range(2, len(runs)) for s in itertools.combinations(runs, size)]
    return Fixture(trace, experiment["id"], runs, plots, long_run, selections)


def cold_unloaded(browser: Browser, runs: list[int]) -> list[tuple[str, float]]:
    """Step 5: the comparison of every run, never asked for: its page, then each plot, one by one."""
    timed = []
    query = "runs=" + ",".join(map(str, runs))
    started = time.perf_counter()
    status, page = browser.request("GET", f"/dashboards/compare/?{query}")
    timed.append(("compare page", time.perf_counter() - started))
    assert status == 200, status
    for url in sorted({u.replace("&amp;", "&") for u in re.findall(r'data-bokeh-src="([^"]+)"', page.decode())}):
        started = time.perf_counter()
        status, _ = browser.request("GET", url, headers={"Accept": "application/json"})
        assert status == 200, (url, status)
        timed.append((url.split("/")[-1].split(".json")[0], time.perf_counter() - started))
    return timed


def logged_in(port: int, usernames: list[str]) -> list[Browser]:
    """A browser per account, logged in before the clock starts (a login hashes the password on
    purpose slowly, and is not what this measures)."""
    browsers = [Browser(port, name) for name in usernames]
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(Browser.log_in, browsers))
    return browsers


# --------------------------------------------------------------------------- the load


@dataclass
class Tally:
    results: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    errors: list[str] = field(default_factory=list)
    parse_waits: list[float] = field(default_factory=list)  # upload to "ready", as its account saw it
    lock: threading.Lock = field(default_factory=threading.Lock)

    def timed(self, browser: Browser, kind: str, method: str, path: str, *, api: bool = False,
              body: bytes | None = None, content_type: str = "", headers: dict | None = None) -> tuple[int, bytes]:
        started = time.perf_counter()
        try:
            if api:
                status, data = browser.api(method, path, body, content_type)
            else:
                status, data = browser.request(method, path, body, headers)
            problem = None if status < 300 else f"{kind}: HTTP {status} {data[:120]!r}"
        except Exception as e:  # noqa: BLE001
            status, data, problem = 0, b"", f"{kind}: {type(e).__name__}: {e}"
        elapsed = time.perf_counter() - started
        with self.lock:
            self.results[kind].append(elapsed)
            if problem:
                self.errors.append(problem)
        return status, data


def warm_kinds(fixture: Fixture) -> list[tuple[str, str, bool]]:
    """(kind, path, through the API) of the requests drawn at random; "" = chosen per request."""
    return [
        ("page: trace list", "/traces/", False),
        ("page: experiment list", "/experiments/", False),
        ("page: experiment", f"/experiments/{fixture.experiment}/", False),
        ("page: comparison", f"/dashboards/experiments/{fixture.experiment}/", False),
        ("page: usage", "/usage/", False),
        ("API: experiment", f"/api/experiments/{fixture.experiment}/", True),
        ("API: traces", "/api/traces/", True),
        ("plot JSON (built)", "", False),
        ("download: trace file", f"/traces/{fixture.trace}/download/", False),
        ("download: schedule.csv", "", False),
        ("download: metrics.csv", f"/experiments/{fixture.experiment}/metrics.csv", False),
    ]


def user(browser: Browser, upload: Path, selection: tuple[int, ...] | None, fixture: Fixture, seconds: float,
         started: float, think: float, seed: int, tally: Tally) -> None:
    rng = random.Random(seed)
    choices = warm_kinds(fixture)
    upload_at, compare_at = rng.uniform(0, seconds / 2), rng.uniform(0, seconds * 0.7)
    mine: int | None = None
    sent_at = checked_at = 0.0
    plotted, compared = False, selection is None
    time.sleep(rng.uniform(0, think))  # accounts arrive spread out, not all in the same instant
    while (now := time.monotonic() - started) < seconds:
        if mine is None and now >= upload_at:
            body, content_type = multipart(upload, {"name": f"{browser.username}'s trace"})
            status, data = tally.timed(browser, "upload (POST)", "POST", "/api/traces/", api=True, body=body,
                                       content_type=content_type)
            match = re.search(rb'"id": *(\d+)', data) if status == 201 else None
            mine, sent_at = (int(match.group(1)) if match else -1), time.monotonic()
        elif mine and mine > 0 and not plotted and time.monotonic() - checked_at > 2:
            checked_at = time.monotonic()
            _, data = tally.timed(browser, "API: own trace status", "GET", f"/api/traces/{mine}/", api=True)
            if b'"status": "ready"' in data:
                with tally.lock:
                    tally.parse_waits.append(time.monotonic() - sent_at)
                tally.timed(browser, COLD + "characterization plots", "GET", f"/dashboards/traces/{mine}/plots.json",
                            headers={"Accept": "application/json"})
                plotted = True
            elif b'"status": "parsing"' not in data:
                with tally.lock:
                    tally.errors.append(f"upload: not parsed: {data[:160]!r}")
                plotted = True
        elif not compared and now >= compare_at:
            compared = True
            status, page = tally.timed(browser, COLD + "compare page", "GET",
                                       "/dashboards/compare/?runs=" + ",".join(map(str, selection or ())))
            for url in sorted({u.replace("&amp;", "&") for u in re.findall(r'data-bokeh-src="([^"]+)"',
                                                                        page.decode(errors="replace"))}):
                tally.timed(browser, COLD + "compare plot", "GET", url, headers={"Accept": "application/json"})
        else:
            kind, path, api = rng.choice(choices)
            if kind.startswith("plot"):
                path = rng.choice(fixture.plots)
            elif kind == "download: schedule.csv":
                path = f"/experiments/runs/{rng.choice(fixture.runs)}/schedule.csv"
            tally.timed(browser, kind, "GET", path, api=api,
                        headers={"Accept": "application/json"} if kind.startswith("plot") else None)
        time.sleep(rng.expovariate(1 / think) if think > 0 else 0)


# --------------------------------------------------------------------------- report


def cpu_seconds(app: App, name: str) -> float:
    """CPU time used so far by every process of the supervisor's children whose command has `name`."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for leader, command in children_of(app.proc.pid):
        if name in command:
            for pid in group_members(leader):
                try:
                    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
                    total += int(fields[11]) + int(fields[12])  # utime + stime
                except OSError:
                    continue
    return total / ticks


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered)) - 1))]


def row(kind: str, values: list[float]) -> str:
    return (f"{kind:<30} {len(values):>6} {percentile(values, 50) * 1000:>8.0f} {percentile(values, 95) * 1000:>8.0f} "
            f"{percentile(values, 99) * 1000:>8.0f} {max(values) * 1000:>8.0f}")


def report(tally: Tally, seconds: float) -> None:
    every = [v for values in tally.results.values() for v in values]
    warm = [v for kind, values in tally.results.items() if not kind.startswith(COLD) for v in values]
    print(f"\n{len(every)} requests in {seconds:.1f} s: {len(every) / seconds:.1f} requests/s, "
          f"{len(tally.errors)} error(s)")
    print(f"{'kind':<30} {'n':>6} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} {'max ms':>8}")
    for kind, values in sorted(tally.results.items()):
        print(row(kind, values))
    if warm:
        print(row("all but the cold builds", warm))
    if every:
        print(row("all", every))
    for problem, count in sorted(((p, tally.errors.count(p)) for p in set(tally.errors)), key=lambda x: -x[1])[:10]:
        print(f"  error ×{count}: {problem}")
    if every:
        def verdict(p95: float) -> str:
            return f"{p95:.3f} s ({'met' if p95 < P95_TARGET else 'MISSED'})"

        print(f"targets (issue 27): p95 < {P95_TARGET:.0f} s: every request {verdict(percentile(every, 95))}, "
              f"the cold builds apart {verdict(percentile(warm, 95)) if warm else '-'}; errors "
              f"{len(tally.errors)} ({'met' if not tally.errors else 'MISSED'})")
    if tally.parse_waits:
        print(f"uploads parsed: {len(tally.parse_waits)}, upload to ready as their accounts saw it (polled every 2 s): "
              f"median {percentile(tally.parse_waits, 50):.1f} s, max {max(tally.parse_waits):.1f} s")


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--users", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--think", type=float, default=1.0, help="mean seconds between an account's requests")
    parser.add_argument("--trace", default="KTH-SP2-1996-2.1-cln.swf.gz", help="a file in the shared data's swf/")
    parser.add_argument("--new-comparisons", type=int, default=10,
                        help="accounts that open, once, a comparison nobody asked for (cold page and plots)")
    args = parser.parse_args()
    seconds = min(args.seconds, MAX_SECONDS)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # `timeout` stops it: the app is stopped too (finally)
    print(f"machine: {os.cpu_count()} CPUs; {uptime()}", flush=True)
    with tempfile.TemporaryDirectory(prefix="schedlab-load-") as folder:
        tmp = Path(folder)
        app = App(tmp / "data")
        try:
            sacct_memory(app, tmp)
            print(f"setup: {args.trace} (shared), a shared experiment of {len(POLICIES)} policies, a long plan1 "
                  f"run, {args.users} accounts …", flush=True)
            fixture = shared_experiment(app, SHARED_DATA / "swf" / args.trace, tmp)
            usernames = [f"user{i:02d}" for i in range(args.users)]
            tokens = app.add_users(usernames)
            browsers = logged_in(app.port, usernames)
            for browser in browsers:
                browser.token = tokens[browser.username]
            uploads = [synthetic_swf(tmp / f"{name}.swf", jobs=300 + i, procs=64) for i, name in enumerate(usernames)]
            cold = cold_unloaded(browsers[0], fixture.runs)
            print("cold builds, unloaded (the comparison of all six runs, asked for the first time): "
                  + ", ".join(f"{name} {t * 1000:.0f} ms" for name, t in cold), flush=True)

            tally = Tally()
            before = os.getloadavg()
            print(f"load average before: {before[0]:.2f} {before[1]:.2f} {before[2]:.2f}; the long run is "
                  f"{app.run_row(fixture.long_run)[0]}", flush=True)
            cpu_before = {name: cpu_seconds(app, name) for name in ("gunicorn", "--hostname quick", "--hostname simulation")}
            client_before = time.process_time()
            started = time.monotonic()
            threads = [threading.Thread(target=user, daemon=True, args=(
                browser, uploads[i], fixture.selections[i % len(fixture.selections)] if i < args.new_comparisons else None,
                fixture, seconds, started, args.think, i, tally)) for i, browser in enumerate(browsers)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(timeout=max(started + seconds - time.monotonic(), 0) + 120)
            elapsed = time.monotonic() - started
            after = os.getloadavg()
            print(f"{args.users} accounts, think time {args.think} s on average, {elapsed:.0f} s")
            report(tally, elapsed)
            # a process that ended meanwhile takes its CPU time with it: then the figure is a lower bound
            cpu = {name: max(0.0, cpu_seconds(app, name) - cpu_before[name]) for name in cpu_before}
            served = sum(len(v) for v in tally.results.values())
            print(f"CPU used meanwhile: web server {cpu['gunicorn']:.1f} s ({cpu['gunicorn'] / max(served, 1) * 1000:.0f} "
                  f"ms a request), quick worker {cpu['--hostname quick']:.1f} s, simulation worker "
                  f"{cpu['--hostname simulation']:.1f} s, this client {time.process_time() - client_before:.1f} s, "
                  f"out of {elapsed * (os.cpu_count() or 1):.0f} CPU-seconds of the machine")
            logged = [line for line in (app.data / "worker.log").read_text(errors="replace").splitlines()
                      if re.search(r"ERROR|CRITICAL|Traceback|WorkerLost|exited|Killed", line)]
            logged += [line for line in app.log().splitlines() if re.search(r"ERROR|Traceback|died|restart", line)]
            print(f"errors logged by the workers and the server meanwhile: {len(logged)}"
                  + "".join(f"\n  {line[:200]}" for line in logged[:8]))
            still = app.run_row(fixture.long_run)
            print(f"load average after: {after[0]:.2f} {after[1]:.2f} {after[2]:.2f}; the long simulation was "
                  f"{still[0]} at the end (attempts {still[1]}); {uptime()}")
        finally:
            app.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
