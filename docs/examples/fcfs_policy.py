"""First come, first served, as a Python policy plugin (docs/policies.md).

    python -m engine simulate TRACE --policy-file docs/examples/fcfs_policy.py --out schedule.csv
"""

from engine.api import Algorithm


class FcfsPolicy(Algorithm):
    """First come, first served (a plugin): jobs start in submit order while the first one fits."""

    name = "fcfs-plugin"

    def schedule(self) -> None:
        while len(self.queue):
            job = self.queue.head()
            if not self.sim.fits(job):
                return
            self.start(job)
