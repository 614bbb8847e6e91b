"""schedule_depends_on: a sweep of deadline_fraction changes only DBF's schedule (EASY and
conservative never read deadlines, as the DBF paper reports them per share only through the regular
jobs); an option that changes the jobs themselves, and a policy's own parameter, change every schedule."""

from __future__ import annotations

from engine.api import resolve_policy, schedule_depends_on, simulate
from engine.workload import load_workload
from engine.workload.model import Workload
from tests.shared_data import SHARED_DATA


def small_trace() -> Workload:
    workload = load_workload(SHARED_DATA / "swf" / "KTH-SP2-1996-2.1-cln.swf.gz")
    return Workload(workload.jobs.iloc[:400].reset_index(drop=True), workload.metadata, workload.report,
                    workload.source)


def starts(workload: Workload, preset: str, share: float) -> list[int]:
    result = simulate(workload, 100, {"preset": preset, "params": {"deadline_fraction": share}})
    schedule = result.schedule.sort_values("job_id")
    return schedule["start"].astype(int).tolist()


def test_what_the_registry_says_about_deadline_shares_is_what_the_simulator_does():
    workload = small_trace()
    for preset in ("fcfs", "easy", "conservative", "dbf"):
        depends = schedule_depends_on("deadline_fraction", resolve_policy(preset))
        same = starts(workload, preset, 0.2) == starts(workload, preset, 0.6)
        assert depends == (not same), preset
    assert schedule_depends_on("deadline_fraction", resolve_policy("dbf"))


def test_options_that_change_the_jobs_and_own_parameters_change_every_policy():
    easy = resolve_policy("easy")
    assert schedule_depends_on("drop_interactive", easy)
    assert schedule_depends_on("masc", resolve_policy("sorted-masc"))
