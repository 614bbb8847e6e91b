"""The web server's processes and threads come from one place (webapp/gunicorn_conf.py), used by
`make run` and the docker image alike."""

from __future__ import annotations

import importlib
from pathlib import Path

import webapp.gunicorn_conf as conf

ROOT = Path(__file__).resolve().parents[2]


def test_one_process_per_core_at_least_two_at_most_eight():
    assert [conf.default_workers(cores) for cores in (1, 2, 4, 8, 64)] == [2, 2, 4, 8, 8]


def test_the_environment_sets_them(monkeypatch):
    monkeypatch.setenv("SCHEDLAB_WEB_WORKERS", "3")
    monkeypatch.setenv("SCHEDLAB_WEB_THREADS", "16")
    try:
        loaded = importlib.reload(conf)
        assert (loaded.workers, loaded.threads, loaded.worker_class, loaded.preload_app) == (3, 16, "gthread", True)
    finally:
        monkeypatch.delenv("SCHEDLAB_WEB_WORKERS")
        monkeypatch.delenv("SCHEDLAB_WEB_THREADS")
        importlib.reload(conf)
    assert conf.threads == 8


def test_make_run_and_the_image_both_read_it():
    assert '"-c", "python:webapp.gunicorn_conf"' in (ROOT / "webapp/run.py").read_text()
    assert "gunicorn -c python:webapp.gunicorn_conf webapp.wsgi" in (ROOT / "Dockerfile").read_text()
