"""The Gantt window a person types: every bad input answers with a message naming what is wrong, never
a 500; and runs of several experiments that do not simulate the same jobs are compared on the jobs they
share, with a warning naming the difference (window, load)."""

from __future__ import annotations

import numpy as np
import pytest
from django.urls import reverse

from webapp.core.time_axis import TimeAxis
from webapp.dashboards.comparison import WindowError, gantt_window

from ..conftest import make_experiment

DEMO_START = 1_700_000_000          # tests/data/demo.swf's UnixStartTime (Europe/Prague, CET = UTC+1)
PRAGUE = TimeAxis(DEMO_START, "Europe/Prague")


def test_an_unreadable_time_is_refused_with_an_example(small_schedules):
    with pytest.raises(WindowError, match="from: “garbage” is not a time; give a date such as 2023-11-14"):
        gantt_window(small_schedules, {"start": "garbage"}, PRAGUE)
    with pytest.raises(WindowError, match="to: “soon” is not a time; give a number of seconds"):
        gantt_window(small_schedules, {"end": "soon"}, TimeAxis())


def test_an_end_before_the_start_is_refused_naming_both(small_schedules):
    with pytest.raises(WindowError) as caught:
        gantt_window(small_schedules, {"start": "2023-11-14 23:15", "end": "2023-11-14 23:14"}, PRAGUE)
    assert "ends (2023-11-14 23:14) before it starts (2023-11-14 23:15)" in str(caught.value)
    with pytest.raises(WindowError, match="before it starts"):
        gantt_window(small_schedules, {"start": "100", "end": "100"}, TimeAxis())


def test_a_window_where_no_job_runs_says_when_the_jobs_run(small_schedules):
    # the small schedules' jobs run from second 0 (first submit) to 1150 (last end)
    with pytest.raises(WindowError) as caught:
        gantt_window(small_schedules, {"start": "5000", "end": "6000"}, PRAGUE)
    assert str(caught.value) == ("No job runs between 2023-11-15 00:36 and 2023-11-15 00:53; the runs' jobs go "
                                 "from 2023-11-14 23:13 to 2023-11-14 23:32.")


def test_a_good_window_and_a_window_given_by_its_end_only(small_schedules):
    window = gantt_window(small_schedules, {"start": "2023-11-14 23:14", "end": "2023-11-14 23:20"}, PRAGUE)
    assert (window.start, window.end) == (40.0, 400.0)    # the trace starts at 23:13:20
    window = gantt_window(small_schedules, {"end": "1000"}, TimeAxis())
    assert (window.start, window.end) == (1000.0 - 86_400, 1000.0)   # one day (the default length) before


def test_the_calendar_axis_takes_no_jobs_at_all():
    assert PRAGUE.x(np.array([], dtype=float)).shape == (0,)


@pytest.mark.django_db
@pytest.mark.parametrize("query, message", [
    ("start=garbage", "is not a time"),
    ("start=2023-11-15+03:00&end=2023-11-15+02:00", "before it starts"),
    ("start=2023-12-01&end=2023-12-02", "No job runs between 2023-12-01 00:00 and 2023-12-02 00:00"),
])
def test_each_plot_of_the_window_answers_400_with_the_message(alice_client, done_experiment, query, message):
    for name in ("gantt", "timelines", "diff"):
        response = alice_client.get(reverse("dashboards:comparison_plot", args=[done_experiment.pk, name]) + "?" + query)
        assert response.status_code == 400, name
        assert message in response.json()["error"]
    download = alice_client.get(reverse("dashboards:comparison_download", args=[done_experiment.pk]) + "?" + query)
    assert download.status_code == 400 and message in download.content.decode()


@pytest.mark.django_db
def test_the_page_shows_the_message_and_draws_the_default_window(alice_client, done_experiment):
    page = alice_client.get(reverse("dashboards:comparison", args=[done_experiment.pk]) + "?start=garbage&a=easy")
    text = page.content.decode()
    assert page.status_code == 200
    assert "id=\"window-error\"" in text and "“garbage” is not a time" in text
    assert 'value="garbage"' in text                      # kept in the form, to be corrected
    assert "start=garbage" not in text and "a=easy" in text   # the plots draw the default window


@pytest.mark.django_db
def test_runs_over_different_windows_are_compared_on_their_common_jobs(alice, alice_client, demo_trace):
    windowed = make_experiment(alice, demo_trace, ["fcfs"], name="first hours", days="0:0.05").runs.get()
    whole = make_experiment(alice, demo_trace, ["easy"], name="whole").runs.get()
    # jobs submitted before 0.05 days (4,320 s): 1-13 less job 9 (no runtime) = 12; the whole trace keeps 28
    assert (windowed.summary["jobs"], whole.summary["jobs"]) == (12, 28)
    url = reverse("dashboards:compare") + f"?runs={windowed.pk},{whole.pk}"
    text = alice_client.get(url).content.decode()
    assert ("These runs do not simulate the same jobs (days 0:0.05 for “fcfs” vs the whole trace for “easy”; "
            "jobs: 12 in “fcfs”, 28 in “easy”). The metrics and plots below compare the 12 jobs every run has."
            ) in text.replace("&#x27;", "'")
    for name in ("gantt", "cdf", "timelines"):
        plot = alice_client.get(reverse("dashboards:compare_plot", args=[name]) + f"?runs={windowed.pk},{whole.pk}")
        assert plot.status_code == 200, name


@pytest.mark.django_db
def test_runs_that_share_no_job_are_not_compared(alice, alice_client, demo_trace):
    early = make_experiment(alice, demo_trace, ["fcfs"], name="early", days="0:0.05").runs.get()
    late = make_experiment(alice, demo_trace, ["fcfs"], name="late", days="0.1:").runs.get()
    text = alice_client.get(reverse("dashboards:compare") + f"?runs={early.pk},{late.pk}").content.decode()
    assert "These runs share no job (days 0:0.05 for “fcfs (#" in text
    assert "data-bokeh-src" not in text and "metrics-table" not in text


@pytest.mark.django_db
def test_runs_of_the_same_jobs_get_no_warning(alice, alice_client, demo_trace):
    a = make_experiment(alice, demo_trace, ["fcfs"], name="a").runs.get()
    b = make_experiment(alice, demo_trace, ["easy"], name="b").runs.get()
    assert 'id="job-sets"' not in alice_client.get(reverse("dashboards:compare") + f"?runs={a.pk},{b.pk}").content.decode()


def test_a_gantt_panel_with_no_job_in_the_window_is_drawn_empty_on_a_calendar(small_schedules):
    # the cross-experiment Gantt answered 500 when one run had no job in the window (TimeAxis.x of nothing)
    from webapp.dashboards.figures.gantt import GanttWindow, gantt_figure

    later = small_schedules["EASY"].assign(submit=lambda s: s["submit"] + 10_000, start=lambda s: s["start"] + 10_000,
                                           end=lambda s: s["end"] + 10_000)
    layout = gantt_figure({"FCFS": small_schedules["FCFS"], "later": later}, 4, GanttWindow(0, 500), axis=PRAGUE)
    assert "jobs" in layout.children[-1].text
