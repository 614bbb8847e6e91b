"""Which queue each kind of work goes to (webapp.core.queues): the router Celery asks for every message."""

from __future__ import annotations

from webapp.celery import app
from webapp.core.queues import queue_for, route


def test_simulations_go_to_their_queue_and_everything_else_is_quick():
    assert route("webapp.experiments.tasks.run_simulation", (1,), {}, {}) == {"queue": "simulation"}
    for name in ("webapp.traces.tasks.parse_trace", "webapp.experiments.tasks.reconcile_runs",
                 "webapp.experiments.tasks.dispatch_runs", "some.new.task"):
        assert route(name, (1,), {}, {}) == {"queue": "quick"}, name
    assert route("webapp.experiments.tasks.run_simulation", (1,), {}, {"queue": "elsewhere"}) == {"queue": "elsewhere"}


def test_the_celery_app_uses_the_router_and_knows_both_queues():
    assert app.conf.task_routes == ("webapp.core.queues.route",)
    assert set(app.amqp.queues) >= {"quick", "simulation"} and app.conf.task_default_queue == "quick"
    routed = app.amqp.router.route({}, "webapp.experiments.tasks.run_simulation", args=(1,))
    assert routed["queue"].name == "simulation"


def test_the_prefix_names_both_queues(settings):
    settings.SCHEDLAB_QUEUE_PREFIX = "rig-7-"
    assert queue_for("webapp.experiments.tasks.run_simulation") == "rig-7-simulation"
    assert queue_for("webapp.traces.tasks.parse_trace") == "rig-7-quick"

