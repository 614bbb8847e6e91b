"""Plan-based scheduling by simulated annealing (PLAN 1, 2, 3).

At every scheduling instant with waiting jobs the whole queue is re-planned: a plan is a
permutation of the waiting jobs, each placed in turn at its earliest fit in the availability
profile (running jobs hold their processors until their expected ends); simulated annealing
(:mod:`engine.sim.planner`) searches the permutations from the queue order, with neighbours made by
taking one job out and putting it back elsewhere, and keeps the best plan seen. The jobs the best
plan starts now start now, in plan order; everything else is planned again at the next instant.

Costs: ``wait`` (PLAN 1, mean wait of the waiting jobs, counted from their submission),
``squared-wait`` (PLAN 2, mean squared wait) and ``makespan`` (PLAN 3, the latest expected end of
running and planned jobs, which for a fixed amount of work maximises utilization).

Where the paper leaves a choice:

* **Acceptance scale.** A worse neighbour is accepted with probability exp(-Δ / (T · scale)).
  The paper's T0 = 1 with costs in seconds would never accept a worse move, so by default
  ``acceptance="initial"`` divides Δ by the cost of the initial (queue order) plan: at T = 1 a
  move that worsens the plan by the whole initial cost passes with probability 1/e, at the final
  T = 10⁻⁴ one that worsens it by 0.01 % does. ``current`` divides by the current plan's cost (a
  relative change), ``absolute`` uses Δ as it is (seconds, seconds², seconds).
* **Seed.** Each decision draws its moves from a generator seeded with the run's seed (the
  ``seed`` of :func:`engine.run.simulate`, ``--seed``, the experiment's seed) and the instant, so
  the same input and seed give the same schedule and no decision depends on how many random
  numbers earlier ones used. There is no separate policy-level seed: the registry passes the run's
  seed to every policy under ``params["seed"]``, so a policy parameter of that name would be
  overwritten.
* **Instants where nothing can start.** If no waiting job fits in the free processors now, no
  plan starts anything now, so the annealing is skipped (the decision is still counted and timed).
* **Window.** ``window=K`` anneals the first K waiting jobs only; the others are planned after
  them in queue order (and start now if they fit in what the K leave). Off (∞) by default.

The run's summary gets ``decisions`` (instants with waiting jobs), ``annealed_decisions`` (those
with at least two jobs to plan and one that fits now),
``evaluated_permutations``, ``mean_decision_ms`` and ``max_decision_ms`` (wall time of the whole
decision: profile, annealing and starting jobs).
"""

from __future__ import annotations

import math
import time

import numpy as np

from engine.policies.algorithm import Algorithm
from engine.policies.base import Param, PolicyError
from engine.policies.ordering import WaitingQueue
from engine.policies.registry import Component, Preset, register, register_algorithm
from engine.sim.planner import (MAKESPAN, MEAN_SQUARED_WAIT, MEAN_WAIT, SCALE_ABSOLUTE, SCALE_CURRENT,
                                SCALE_INITIAL, best_plan, plan_cost, temperature_schedule)
from engine.sim.profile import running_jobs_profile
from engine.sim.simulator import Simulation

OBJECTIVES = {"wait": MEAN_WAIT, "squared-wait": MEAN_SQUARED_WAIT, "makespan": MAKESPAN}
ACCEPTANCE = {"initial": SCALE_INITIAL, "current": SCALE_CURRENT, "absolute": SCALE_ABSOLUTE}

PARAMS = (
    Param("objective", "choice", "squared-wait",
          "what a plan minimises: wait (PLAN 1), squared-wait (PLAN 2), makespan (PLAN 3)",
          choices=tuple(OBJECTIVES), label="objective"),
    Param("t0", "float", 1.0, "initial temperature T0", minimum=0, label="initial temperature T0"),
    Param("t_threshold", "float", 1e-4, "annealing stops when the temperature is not above this", minimum=1e-12,
          label="stop temperature Tth"),
    Param("moves_per_temperature", "int", 100, "moves tried at each temperature (N)", minimum=0,
          label="moves per temperature N", unit="moves"),
    Param("cooling", "float", 0.9, "temperature factor r after each N moves (0 < r < 1)", minimum=0,
          label="cooling factor r"),
    Param("acceptance", "choice", "initial",
          "a cost increase is divided by: the initial plan's cost, the current plan's cost, or nothing (absolute)",
          choices=tuple(ACCEPTANCE), label="a cost increase is scaled by"),
    Param("window", "int", math.inf, "anneal only the first K waiting jobs (the rest follow in queue order)",
          minimum=1, allow_infinity=True, label="jobs annealed (window K)", unit="jobs"),
)


class PlanBased(Algorithm):
    """``plan``: re-plan every waiting job at each instant by simulated annealing."""

    def __init__(self, sim: Simulation, queue: WaitingQueue, params: dict) -> None:
        super().__init__(sim, queue, params)
        cooling = float(params["cooling"])
        if not 0 < cooling < 1:
            raise PolicyError(f"parameter cooling: must be between 0 and 1 (exclusive), got {cooling!r}")
        self.kind = OBJECTIVES[params["objective"]]
        self.scale_mode = ACCEPTANCE[params["acceptance"]]
        self.temperatures = temperature_schedule(float(params["t0"]), float(params["t_threshold"]), cooling)
        self.moves_per_temperature = int(params["moves_per_temperature"])
        self.window = params["window"]
        self.seed = int(params.get("seed", 0))
        self.estimate = np.asarray(sim.estimate, dtype=np.int64)
        self.size = np.asarray(sim.size, dtype=np.int64)
        self.submit = np.asarray(sim.submit, dtype=np.int64)
        self.decision_seconds: list[float] = []
        self.annealed = 0
        self.evaluated = 0
        warm_up()

    # the decision ------------------------------------------------------------------------------
    def schedule(self) -> None:
        if not len(self.queue):
            return
        began = time.perf_counter()
        for job in self.decide():
            if self.sim.fits(job):
                self.start(job)
        self.decision_seconds.append(time.perf_counter() - began)

    def decide(self) -> list[int]:
        """The waiting jobs the best plan starts now, in plan order."""
        sim = self.sim
        waiting = np.asarray(self.queue.jobs(), dtype=np.int64)
        size = self.size[waiting]
        if int(size.min()) > sim.free:
            return []   # nothing fits now: no plan starts anything now
        base_t, base_f, base_cost = running_profile(sim, self.kind)
        planned = waiting if math.isinf(self.window) else waiting[:int(self.window)]
        plan = best_plan(self.estimate[planned], self.size[planned], sim.now - self.submit[planned], self.kind,
                         base_t, base_f, base_cost, temperatures=self.temperatures,
                         moves_per_temperature=self.moves_per_temperature, scale_mode=self.scale_mode,
                         rng=np.random.default_rng([self.seed % 2 ** 64, sim.now % 2 ** 64]))
        self.annealed += len(planned) >= 2
        self.evaluated += plan.evaluated
        order, starts = planned[plan.order], plan.starts[plan.order]
        if len(planned) < len(waiting):   # the rest follow the best plan in queue order
            order = np.concatenate([order, waiting[len(planned):]])
            offsets = np.empty(len(order), dtype=np.int64)
            plan_cost(np.arange(len(order), dtype=np.int64), self.estimate[order], self.size[order],
                      sim.now - self.submit[order], self.kind, base_t, base_f, len(base_t), float(base_cost),
                      offsets)
            starts = offsets
        return order[starts == 0].tolist()

    # what the run reports ------------------------------------------------------------------------
    def summary(self) -> dict:
        seconds = np.asarray(self.decision_seconds)
        return {
            "decisions": len(seconds),
            "annealed_decisions": self.annealed,
            "evaluated_permutations": self.evaluated,
            "mean_decision_ms": float(seconds.mean() * 1e3) if len(seconds) else None,
            "max_decision_ms": float(seconds.max() * 1e3) if len(seconds) else None,
        }


def running_profile(sim: Simulation, kind: int) -> tuple[np.ndarray, np.ndarray, float]:
    """The availability profile of the running jobs from now: (times, free) with times[0] = now,
    and the cost a plan starts from (for the makespan the latest running end from now, else 0).

    A job running past its expected end (overruns allowed) is expected to end in one second."""
    profile = running_jobs_profile(sim)
    base_t, base_f = profile.times[:profile.length].copy(), profile.free[:profile.length].copy()
    base_cost = float(base_t[-1] - base_t[0]) if kind == MAKESPAN else 0.0
    return base_t, base_f, base_cost


_warm = False


def warm_up() -> None:
    """Compile (or load from numba's cache) the kernels before the first timed decision."""
    global _warm
    if not _warm:
        _warm = True
        base_t, base_f = np.array([0, 5], dtype=np.int64), np.array([1, 2], dtype=np.int64)
        for kind in OBJECTIVES.values():
            best_plan(np.array([3, 4], dtype=np.int64), np.array([1, 2], dtype=np.int64), np.array([0, 1], dtype=np.int64),
                      kind, base_t, base_f, 0.0, temperatures=np.array([1.0]), moves_per_temperature=2,
                      scale_mode=SCALE_INITIAL, rng=np.random.default_rng(0))
        plan_cost(np.arange(2, dtype=np.int64), np.array([3, 4], dtype=np.int64), np.array([1, 2], dtype=np.int64),
                  np.array([0, 1], dtype=np.int64), MEAN_WAIT, base_t, base_f, 2, 0.0, np.empty(2, dtype=np.int64))


register_algorithm(Component("plan", PlanBased, PARAMS, "plan-based scheduling by simulated annealing"))
for _name, _objective, _what in (("plan1", "wait", "mean wait"), ("plan2", "squared-wait", "mean squared wait"),
                                 ("plan3", "makespan", "plan makespan (utilization)")):
    register(Preset(_name, f"Plan-based scheduling: simulated annealing of the whole queue's plan for {_what} "
                           f"(PLAN {_name[-1]}).", "fcfs", "plan", {"objective": _objective},
                    family="plan", paper="plan"))
