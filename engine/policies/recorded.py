"""The ``recorded`` preset: the schedule as it happened (engine.sim.recorded), listed with the policies
so the command line, the web form and every experiment can put reality beside the simulations."""

from __future__ import annotations

from engine.policies.registry import Component, Preset, register, register_algorithm
from engine.sim.recorded import RecordedScheduler, RecordedSimulation

DESCRIPTION = ("What really happened: every job starts at its recorded start time (SWF wait field, PBS S "
               "records, sacct Start); jobs without one are left out and counted.")

register_algorithm(Component("recorded", RecordedScheduler, (), "the recorded starts, replayed",
                             simulation=RecordedSimulation))
register(Preset("recorded", DESCRIPTION, "fcfs", "recorded", family="recorded"))
