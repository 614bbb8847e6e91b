"""Algorithms that decide what starts now, over any ordering of the waiting queue.

- ``none``: start jobs in queue order while the head fits (the Paragon paper's SSS).
- ``firstfit``: start any job that fits, in queue order, with no reservation.
- ``easy``: a reservation for the head job only; a later job may start now if it fits and does not
  delay that reservation (it ends before the shadow time, or uses only the extra processors).
- ``conservative``: every waiting job holds a reservation in the availability profile, made when
  it arrives; a job starts early only if no reservation moves later. When a job ends before its
  requested time, reservations are compressed: each waiting job (in queue order) moves to the
  earliest place it now fits, repeated until no job can move (see :meth:`Conservative.compress`).
"""

from __future__ import annotations

from engine.policies.algorithm import Algorithm
from engine.policies.registry import Component, register_algorithm


class InOrder(Algorithm):
    """``none``: start jobs in queue order while the head fits."""

    def schedule(self) -> None:
        queue, sim = self.queue, self.sim
        while len(queue):
            head = queue.head()
            if not sim.fits(head):
                return
            self.start(head)


class FirstFit(Algorithm):
    """``firstfit``: any waiting job that fits starts, in queue order; no reservation."""

    def schedule(self) -> None:
        sim, queue = self.sim, self.queue
        size = sim.size
        for job in queue.jobs():
            free = sim.free
            if free == 0:
                return
            if size[job] <= free and queue.may_start(job) and sim.fits(job):
                self.start(job)


class Easy(Algorithm):
    """``easy``: EASY backfilling (a reservation for the head job only)."""

    def schedule(self) -> None:
        sim, queue = self.sim, self.queue
        while len(queue):
            head = queue.head()
            if not sim.fits(head):
                break
            self.start(head)
        else:
            return
        if sim.free == 0:
            return
        shadow, extra = self.shadow(head)
        now, size, estimate = sim.now, sim.size, sim.estimate
        for job in queue.jobs()[1:]:
            free = sim.free
            if free == 0:
                return
            need = size[job]
            if need > free or not queue.may_start(job):
                continue
            if now + estimate[job] <= shadow:
                if sim.fits(job):
                    self.start(job)
            elif need <= extra and sim.fits(job):
                self.start(job)
                extra -= need

    def shadow(self, head: int) -> tuple[int, int]:
        """When the head job can start at the latest (running jobs end as requested), and how
        many processors will be left over then (the *extra* processors backfill may use).

        The extra processors count every running job that has ended by the shadow time, also
        those expected to end at the very instant the head first fits (textbook EASY); stopping at
        the first job that makes the head fit would leave processors idle that backfill may use.
        A job running past its expected end (overruns allowed) is expected to end in one second.
        """
        sim = self.sim
        need, available, now = sim.size[head], sim.free, sim.now
        size = sim.size
        shadow = -1
        for end, job in sim.running_ends:
            if shadow >= 0 and end > shadow:
                break
            available += size[job]
            if shadow < 0 and available >= need:
                shadow = max(end, now + 1)
        if shadow < 0:
            return now + 1, 0   # unreachable for jobs that fit the machine
        return shadow, available - need


register_algorithm(Component("none", InOrder, (), "start jobs in queue order while the head fits"))
register_algorithm(Component("firstfit", FirstFit, (), "any waiting job that fits, no reservation"))
register_algorithm(Component("easy", Easy, (), "EASY backfilling"))
