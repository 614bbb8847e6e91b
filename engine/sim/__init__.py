"""The simulator: event loop, availability profile, allocation rules and node placement.

It knows no policy registry: :mod:`engine.run` assembles a run (policy, workload, platform) and
drives the loop."""

from engine.sim.simulator import SCHEDULE_COLUMNS, Cancelled, SimResult, SimulationError

__all__ = ["SCHEDULE_COLUMNS", "Cancelled", "SimResult", "SimulationError"]
