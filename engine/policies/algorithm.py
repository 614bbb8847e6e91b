"""The interface of an algorithm, the part of a policy that decides what starts: every built-in
algorithm subclasses :class:`Algorithm`, and so does a Python plugin (docs/policies.md)."""

from __future__ import annotations

from typing import Any, ClassVar

from engine.policies.base import Param
from engine.policies.ordering import WaitingQueue
from engine.sim.simulator import Simulation


class Algorithm:
    """Decides what starts, when jobs arrive and end.

    The simulation calls :meth:`on_submit` for each arriving job and :meth:`on_finish` for each
    ending one, then :meth:`schedule` once per instant (after every end and arrival of that
    instant). The algorithm reads ``self.sim`` (time, the jobs' requests, free processors, running
    jobs' expected ends: :class:`~engine.sim.simulator.Simulation`), keeps its waiting jobs in
    ``self.queue`` (in the policy's order) and starts jobs with :meth:`start`; ``self.params`` holds
    the values of its parameters. Reservations: an :class:`engine.sim.profile.Profile` of free
    processors over time (``running_jobs_profile(sim)`` is the one of the running jobs).

    A plugin also says, as class attributes, its preset's ``name`` (default: the class name in
    lower case), its ``parameters`` (:class:`Param` schemas: form fields and ``--set``) and the
    ``ordering`` of its preset; its docstring is the preset's description.
    """

    name: ClassVar[str] = ""
    parameters: ClassVar[tuple[Param, ...]] = ()
    ordering: ClassVar[str] = "fcfs"

    def __init__(self, sim: Simulation, queue: WaitingQueue, params: dict[str, Any]) -> None:
        self.sim = sim
        self.queue = queue
        self.params = params

    def on_submit(self, job: int) -> None:
        self.queue.add(job)

    def on_finish(self, job: int) -> None:
        pass

    def start(self, job: int) -> None:
        """Start the waiting ``job`` now and take it out of the queue. The simulation refuses
        (the run fails, naming the job) a job not yet submitted, already started, or without room."""
        self.sim.start(job)
        self.queue.remove(job)
        self.queue.started(job)

    def schedule(self) -> None:
        raise NotImplementedError
