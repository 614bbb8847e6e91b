"""The plot cache in a threaded web server process: figures nobody asked for before are built one at a
time (the threads asking take turns), a figure finished while a thread waited is read, not built again,
and a page's own tables never wait for a figure's turn."""

from __future__ import annotations

import threading
import time

from webapp.dashboards.plot_cache import cached_gzip_json, cached_json, one_build_at_a_time


class Builds:
    """A build that takes a while and records how many builds ran at once."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.now = self.most = self.count = 0

    def __call__(self) -> dict:
        with self.lock:
            self.now += 1
            self.count += 1
            self.most = max(self.most, self.now)
        time.sleep(0.05)
        with self.lock:
            self.now -= 1
        return {"built": True}


def in_threads(*targets) -> None:  # noqa: ANN002
    threads = [threading.Thread(target=target) for target in targets]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)


def test_cold_figures_are_built_one_at_a_time(media_root):
    builds = Builds()
    in_threads(*[lambda i=i: cached_gzip_json("test", f"plot{i}", "k", builds) for i in range(6)])
    assert builds.count == 6 and builds.most == 1


def test_threads_asking_for_the_same_figure_build_it_once(media_root):
    builds = Builds()
    answers: list[bytes] = []
    in_threads(*[lambda: answers.append(cached_gzip_json("test", "same", "k", builds)) for _ in range(5)])
    assert builds.count == 1 and len(set(answers)) == 1 and len(answers) == 5


def test_a_build_may_ask_the_cache_for_another_figure(media_root):
    """The turn is re-entrant: a figure built from another cached one does not wait for itself."""
    inner = Builds()
    outer = cached_json("test", "outer", "k", lambda: {"inner": cached_json("test", "inner", "k", inner)})
    assert outer == {"inner": {"built": True}} and inner.count == 1
    done: list[bytes] = []
    worker = threading.Thread(target=lambda: done.append(
        cached_gzip_json("test", "outer2", "k", lambda: {"x": cached_gzip_json("test", "inner2", "k", inner) != b""})))
    worker.start()
    worker.join(timeout=10)
    assert done, "a nested build waited for its own turn"


def test_a_pages_tables_do_not_wait_for_a_figures_turn(media_root):
    with one_build_at_a_time():   # another thread's figure build holds the turn
        answers: list[object] = []
        table = threading.Thread(target=lambda: answers.append(cached_json("test", "table", "k", lambda: {"rows": 3})))
        table.start()
        table.join(timeout=5)
        assert answers == [{"rows": 3}]
