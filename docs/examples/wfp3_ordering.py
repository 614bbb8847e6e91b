"""WFP3 as a Python ordering plugin (docs/policies.md), run with EASY backfilling.

    python -m engine simulate TRACE --policy-file docs/examples/wfp3_ordering.py --out schedule.csv

Tang, Lan, Desai, Buettner & Yu, "Fault-aware, utility-based job scheduling on Blue Gene/P
systems", IEEE Cluster 2009: priority (wait / requested time)^3 x processors, larger first.
"""

from engine.api import Ordering


class Wfp3(Ordering):
    """WFP3 (a plugin): (wait / requested time)^3 x processors, the largest first, with EASY
    backfilling; favours jobs that waited long for their size of request."""

    name = "wfp3-plugin"
    algorithm = "easy"
    by_state = True            # the key reads sim.now: the queue is put in order at every instant

    def key(self, job: int) -> float:
        sim = self.sim
        wait = sim.now - sim.submit[job]
        return -((wait / sim.estimate[job]) ** 3 * sim.procs[job])
