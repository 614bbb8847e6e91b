"""The base every algorithm builds on: it owns the waiting queue and starts jobs through it."""

from __future__ import annotations

from engine.policies.ordering import WaitingQueue
from engine.sim.simulator import Simulation


class Algorithm:
    """Base: keeps the queue up to date; subclasses implement :meth:`schedule`."""

    def __init__(self, sim: Simulation, queue: WaitingQueue, params: dict) -> None:
        self.sim = sim
        self.queue = queue
        self.params = params

    def on_submit(self, job: int) -> None:
        self.queue.add(job)

    def on_finish(self, job: int) -> None:
        pass

    def start(self, job: int) -> None:
        self.queue.remove(job)
        self.sim.start(job)
        self.queue.started(job)

    def schedule(self) -> None:
        raise NotImplementedError
