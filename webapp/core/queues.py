"""Which Celery queue each kind of background work goes to: the one place that says it.

Two queues, each served by workers of its own, so that quick work never waits behind a simulation:

- ``quick``: parsing an upload, inferences and checks, housekeeping. Seconds, bounded by
  the time and memory limits of webapp.core.limits.
- ``simulation``: runs (experiments, previews, sweeps, study points). Minutes to hours; they reach this queue
  only through the fair dispatcher (webapp.experiments.fairqueue), one message per free slot.

Celery asks :func:`route` for every message (settings: CELERY_TASK_ROUTES); a new task is quick
unless it is named in SIMULATION_TASKS. A task whose queue depends on the work adds its name here, or
sends with ``queue=queue_for(kind)``.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings

QUICK = "quick"
SIMULATION = "simulation"
QUEUES = (QUICK, SIMULATION)

#: tasks that simulate (long, CPU-bound): everything else is quick
SIMULATION_TASKS = frozenset({
    "webapp.experiments.tasks.run_simulation",
    "webapp.preview.tasks.calibrate_site_preview",   # a site preview's calibration: some 80 short replays
})


def queue_for(task_name: str) -> str:
    """The queue a task named `task_name` belongs to (its name: SCHEDLAB_QUEUE_PREFIX + kind)."""
    return queue_name(SIMULATION if task_name in SIMULATION_TASKS else QUICK)


def queue_name(kind: str) -> str:
    """The broker's name of the queue of this kind (QUICK or SIMULATION)."""
    return settings.SCHEDLAB_QUEUE_PREFIX + kind


def route(name: str, args: Any, kwargs: Any, options: dict, task: Any = None, **_: Any) -> dict[str, str]:
    """Celery's router protocol (CELERY_TASK_ROUTES): a queue given explicitly when sending wins."""
    if options.get("queue"):
        return {"queue": options["queue"] if isinstance(options["queue"], str) else options["queue"].name}
    return {"queue": queue_for(name)}
