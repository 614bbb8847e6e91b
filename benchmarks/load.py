"""Load: concurrent users on loopback against `make run`'s gunicorn while its worker simulates.

    .venv/bin/python benchmarks/load.py [--users 50] [--seconds 60] [--think 1.0] [--trace NAME.swf.gz]

Starts the application exactly as `make run` does (python -m webapp.run: gunicorn with 2 processes
× 4 threads, one Celery worker, SQLite, filesystem broker) in a temporary data directory. Setup:
uploads the trace (default KTH-SP2-1996 from the shared data), runs an experiment on it (fcfs,
easy) and waits for both runs, then starts a long simulation (plan1 over 2,000 synthetic jobs at three
times their load) so that the worker simulates through the whole measurement.

Then `--users` threads, each a browser with its own session (logged in before the clock starts) and
keep-alive connection,
loop for `--seconds` (at most 120): pick a request (trace list page, experiment page, one of the
comparison's plot JSONs, API: the experiment's status or the trace list, with a token), send it,
wait `--think` seconds on average (exponential, seeded), again. Prints requests per second,
p50/p95/p99 latency overall and per kind, errors (status >= 300 or no answer), the CPU time the web
server, the worker and this client used meanwhile (the web server's per request is the figure that
does not depend on what else the machine runs), the load average before and after, and whether the
simulation was running all along.
"""

from __future__ import annotations

import argparse
import http.client
import os
import random
import re
import statistics
import sys
import tempfile
import threading
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.shared_data import SHARED_DATA  # noqa: E402
from tests.app_process import PASSWORD, App, children_of, wait_for  # noqa: E402
from webapp.run import group_members  # noqa: E402

MAX_SECONDS = 120


class Browser:
    """One user: a keep-alive connection and the session cookie of a login."""

    def __init__(self, port: int) -> None:
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        self.cookies: dict[str, str] = {}

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

    def log_in(self) -> None:
        self.request("GET", "/accounts/login/")
        form = urlencode({"username": "admin", "password": PASSWORD, "csrfmiddlewaretoken": self.cookies["csrftoken"]})
        status, _ = self.request("POST", "/accounts/login/", form.encode(),
                                 {"Content-Type": "application/x-www-form-urlencoded"})
        assert status == 302, f"login answered {status}"


def setup(app: App, trace_path: Path, tmp: Path) -> dict:
    """A parsed trace, an experiment with finished runs and its plot URLs, a long run in progress."""
    trace = app.upload(trace_path, name=trace_path.name)
    experiment = app.call("POST", "/api/experiments/", {"trace": trace, "policies": [{"preset": "fcfs"},
                                                                                    {"preset": "easy"}]})
    wait_for("the experiment's runs", lambda: app.call("GET", f"/api/experiments/{experiment['id']}/")["finished"],
             timeout=900)
    browser = Browser(app.port)
    browser.log_in()
    _, page = browser.request("GET", f"/dashboards/experiments/{experiment['id']}/")
    plots = sorted(set(re.findall(r'data-bokeh-src="([^"]+)"', page.decode())))
    assert plots, "the comparison page lists no plot"
    for url in plots:  # built once here (as the worker's prebuild or the first visitor would)
        browser.request("GET", url.replace("&amp;", "&"))
    long_run = app.start_long_run(tmp)
    return {"trace": trace, "experiment": experiment["id"], "plots": [u.replace("&amp;", "&") for u in plots],
            "long_run": long_run}


def kinds(fixture: dict, token: str) -> list[tuple[str, str, dict]]:
    auth = {"Authorization": f"Token {token}", "Accept": "application/json"}
    return [
        ("trace list", "/traces/", {}),
        ("experiment page", f"/experiments/{fixture['experiment']}/", {}),
        ("plot JSON", "", {"Accept": "application/json"}),  # one of the comparison's plots, drawn at random
        ("API experiment", f"/api/experiments/{fixture['experiment']}/", auth),
        ("API traces", "/api/traces/", auth),
    ]


def logged_in(port: int, count: int) -> list[Browser]:
    """`count` browsers, each with a session of its own; logged in before the clock starts (a login
    hashes the password on purpose slowly, and is not what this measures)."""
    browsers = [Browser(port) for _ in range(count)]
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(Browser.log_in, browsers))
    return browsers


def user(browser: Browser, fixture: dict, token: str, stop_at: float, think: float, seed: int,
         results: dict[str, list[float]], errors: list[str], lock: threading.Lock) -> None:
    rng = random.Random(seed)
    choices = kinds(fixture, token)
    time.sleep(rng.uniform(0, think))  # users arrive spread out, not all in the same instant
    while time.monotonic() < stop_at:
        kind, path, headers = rng.choice(choices)
        path = path or rng.choice(fixture["plots"])
        started = time.perf_counter()
        try:
            status, _ = browser.request("GET", path, headers=headers)
            problem = None if status < 300 else f"{kind}: HTTP {status}"
        except Exception as e:  # noqa: BLE001
            problem = f"{kind}: {type(e).__name__}: {e}"
        elapsed = time.perf_counter() - started
        with lock:
            results[kind].append(elapsed)
            if problem:
                errors.append(problem)
        time.sleep(rng.expovariate(1 / think) if think > 0 else 0)


def cpu_seconds(app: App, name: str) -> float:
    """CPU time used so far by every process of the supervisor's child `name` ("gunicorn", "celery")."""
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


def niceness(app: App, name: str) -> list[int]:
    """The nice values of the processes of the supervisor's child `name` (the worker's pool processes
    run niced: webapp.celery.yield_to_the_web_server)."""
    values = []
    for leader, command in children_of(app.proc.pid):
        if name in command:
            for pid in group_members(leader):
                try:
                    values.append(int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[16]))
                except OSError:
                    continue
    return sorted(set(values))


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered)) - 1))]


def report(results: dict[str, list[float]], errors: list[str], seconds: float) -> None:
    every = [v for values in results.values() for v in values]
    print(f"\n{len(every)} requests in {seconds:.1f} s: {len(every) / seconds:.1f} requests/s, "
          f"{len(errors)} error(s)")
    print(f"{'kind':<16} {'n':>6} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} {'max ms':>8}")
    for kind, values in [*sorted(results.items()), ("all", every)]:
        if values:
            print(f"{kind:<16} {len(values):>6} {percentile(values, 50) * 1000:>8.0f} "
                  f"{percentile(values, 95) * 1000:>8.0f} {percentile(values, 99) * 1000:>8.0f} {max(values) * 1000:>8.0f}")
    for problem, count in sorted(((p, errors.count(p)) for p in set(errors)), key=lambda x: -x[1])[:10]:
        print(f"  error ×{count}: {problem}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--users", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--think", type=float, default=1.0, help="mean seconds between a user's requests")
    parser.add_argument("--trace", default="KTH-SP2-1996-2.1-cln.swf.gz", help="a file in the shared data's swf/")
    args = parser.parse_args()
    seconds = min(args.seconds, MAX_SECONDS)
    with tempfile.TemporaryDirectory(prefix="schedlab-load-") as tmp:
        app = App(Path(tmp) / "data")
        try:
            print(f"setup: {args.trace}, experiment fcfs + easy, a long plan1 run …", flush=True)
            fixture = setup(app, SHARED_DATA / "swf" / args.trace, Path(tmp))
            browsers = logged_in(app.port, args.users)
            before = os.getloadavg()
            progress_before = app.run_row(fixture["long_run"])
            print(f"load average before: {before[0]:.2f} {before[1]:.2f} {before[2]:.2f} "
                  f"({os.cpu_count()} CPUs); the long run is {progress_before[0]}", flush=True)
            results: dict[str, list[float]] = defaultdict(list)
            errors: list[str] = []
            lock = threading.Lock()
            cpu_before = {name: cpu_seconds(app, name) for name in ("gunicorn", "celery")}
            client_before = time.process_time()
            stop_at = time.monotonic() + seconds
            started = time.monotonic()
            threads = [threading.Thread(target=user, args=(browser, fixture, app.token, stop_at, args.think, i,
                                                           results, errors, lock), daemon=True)
                       for i, browser in enumerate(browsers)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(timeout=max(stop_at - time.monotonic(), 0) + 60)
            elapsed = time.monotonic() - started
            after = os.getloadavg()
            print(f"{args.users} users, think time {args.think} s on average, {elapsed:.0f} s")
            report(results, errors, elapsed)
            cpu = {name: cpu_seconds(app, name) - cpu_before[name] for name in cpu_before}
            served = sum(len(v) for v in results.values())
            print(f"CPU used meanwhile: web server {cpu['gunicorn']:.1f} s ({cpu['gunicorn'] / max(served, 1) * 1000:.0f} ms "
                  f"a request), worker {cpu['celery']:.1f} s, this client {time.process_time() - client_before:.1f} s, "
                  f"out of {elapsed * (os.cpu_count() or 1):.0f} CPU-seconds of the machine")
            still = app.run_row(fixture["long_run"])
            print(f"nice values: web server {niceness(app, 'gunicorn')}, worker {niceness(app, 'celery')}")
            print(f"load average after: {after[0]:.2f} {after[1]:.2f} {after[2]:.2f}; "
                  f"the worker's simulation was {still[0]} at the end (attempts {still[1]})")
            if results:
                print(f"median of all: {statistics.median(v for vs in results.values() for v in vs) * 1000:.0f} ms")
        finally:
            app.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
