"""The simulator: event loop, availability profile and allocation rules."""

from engine.sim.simulator import SCHEDULE_COLUMNS, Cancelled, SimResult, SimulationError, simulate

__all__ = ["SCHEDULE_COLUMNS", "Cancelled", "SimResult", "SimulationError", "simulate"]
