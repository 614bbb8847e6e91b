"""EASY backfilling, as a Python policy plugin (docs/policies.md): the built-in EASY's schedule.

    python -m engine simulate TRACE --policy-file docs/examples/easy_policy.py --out schedule.csv
"""

from engine.api import Algorithm


class EasyPolicy(Algorithm):
    """EASY backfilling (a plugin): a reservation for the first waiting job only; a later job
    starts now if it fits and does not delay that reservation."""

    name = "easy-plugin"

    def schedule(self) -> None:
        sim, queue = self.sim, self.queue
        while len(queue) and sim.fits(queue.head()):
            self.start(queue.head())
        if not len(queue) or sim.free == 0:
            return
        shadow, extra = self.reservation(queue.head())
        for job in queue.jobs()[1:]:
            if sim.free == 0:
                return
            if not sim.fits(job):
                continue
            if sim.now + sim.estimate[job] <= shadow:      # ends before the reservation
                self.start(job)
            elif sim.size[job] <= extra:                   # or leaves the head its processors
                self.start(job)
                extra -= sim.size[job]

    def reservation(self, head: int) -> tuple[int, int]:
        """When the head job can start at the latest (running jobs end as requested; one past its
        request in a second), and the processors left over for backfilling then."""
        sim = self.sim
        available, shadow = sim.free, -1
        for end, job in sim.running_ends:               # sorted by expected end
            if shadow >= 0 and end > shadow:
                break
            available += sim.size[job]
            if shadow < 0 and available >= sim.size[head]:
                shadow = max(end, sim.now + 1)
        return shadow, available - sim.size[head]
