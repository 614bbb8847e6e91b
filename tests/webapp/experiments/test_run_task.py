"""The run task: a real simulation whose results land in MEDIA_ROOT/runs/<id>/ all at once."""

from __future__ import annotations

import json

import pytest

from webapp.experiments.models import Run

pytestmark = pytest.mark.django_db


def test_a_run_writes_schedule_summary_and_cache(done_run):
    assert done_run.status == "done", done_run.error
    assert done_run.progress == 1.0 and done_run.attempts == 1
    assert sorted(p.name for p in done_run.result_dir.iterdir()) == ["meta.json", "schedule.csv", "schedule.npz", "summary.json"]
    assert json.loads((done_run.result_dir / "summary.json").read_text()) == done_run.summary
    schedule = done_run.load_schedule()
    assert list(schedule.columns[:10]) == ["job_id", "user", "submit", "start", "end", "procs", "requested_time",
                                           "runtime", "wait", "killed"]
    assert len(schedule) == done_run.summary["jobs"]
    assert done_run.schedule_csv.read_text().splitlines()[0].startswith("job_id,user,submit,start,end")


def test_a_second_delivery_of_a_finished_run_does_nothing(done_run):
    from webapp.experiments.tasks import run_simulation

    before = done_run.result_dir.stat().st_mtime_ns
    run_simulation(done_run.pk)
    done_run.refresh_from_db()
    assert done_run.status == "done" and done_run.attempts == 1
    assert done_run.result_dir.stat().st_mtime_ns == before


def test_no_temporary_directory_is_left_behind(done_run, media_root):
    assert [p.name for p in (media_root / "runs").iterdir() if p.name.startswith(".")] == []


def test_the_dashboards_read_the_same_schedule_the_csv_holds(done_run):
    import pandas as pd

    from_csv = pd.read_csv(done_run.schedule_csv)
    from_csv["held_by"] = from_csv["held_by"].fillna("")    # a job that never waited: "" (an empty CSV cell)
    pd.testing.assert_frame_equal(done_run.load_schedule(), from_csv, check_dtype=False)
    assert Run.objects.get(pk=done_run.pk).summary["mean_wait"] >= 0
