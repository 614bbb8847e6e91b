"""Headless Debian Chromium through playwright's sync API, and a real in-process Celery worker."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from tests.shared_data import SHARED_DATA

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update"]
REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "test-artifacts"
SHARED_SWF = SHARED_DATA / "swf"

# Playwright's sync API runs an event loop in this thread; Django must still allow ORM calls.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


@pytest.fixture(scope="session")
def browser():  # noqa: ANN201
    if not os.access(CHROMIUM, os.X_OK):
        pytest.skip(f"no Chromium at {CHROMIUM} (make browser installs it)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@dataclass
class PageWatch:
    """What a page did that a test must see: console errors, requests off the server, failed responses."""

    origin: str
    errors: list[str] = field(default_factory=list)
    external: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)

    def attach(self, page) -> None:  # noqa: ANN001
        page.on("console", lambda m: m.type == "error" and self.errors.append(m.text))
        page.on("pageerror", lambda e: self.errors.append(str(e)))
        page.on("request", lambda r: self._request(r.url))
        page.on("response", lambda r: r.status >= 400 and self.failed.append(f"{r.status} {r.url}"))

    def _request(self, url: str) -> None:
        if not (url.startswith(self.origin) or url.startswith(("data:", "blob:", "about:"))):
            self.external.append(url)


@pytest.fixture
def page(browser, live_server) -> Iterator:  # noqa: ANN001
    context = browser.new_context(viewport={"width": 1360, "height": 900})
    page = context.new_page()
    page.set_default_timeout(60_000)
    page.watch = PageWatch(live_server.url)
    page.watch.attach(page)
    yield page
    context.close()


@pytest.fixture
def celery_worker(transactional_db, settings, tmp_path) -> Iterator[None]:  # noqa: ANN001
    """The project's Celery app on an in-memory broker, with a solo worker thread in this process. Its
    shutdown waits up to 60 s for the task in hand: after an experiment's last run the worker builds the
    comparison's plots (experiment_finished), 17-23 s on this shared machine at load 8, often after the
    test has read its page."""
    from celery.contrib.testing.worker import start_worker

    from tests.celery_broker import on_broker
    from webapp.celery import app

    with on_broker(app, "memory://", "cache+memory://", task_ignore_result=True), \
            start_worker(app, pool="solo", perform_ping_check=False, shutdown_timeout=60):
        yield
