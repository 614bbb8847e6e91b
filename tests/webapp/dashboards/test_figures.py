"""Figure builders on tiny schedules whose answers can be worked out by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tests.shared_data import SHARED_DATA
from bokeh.embed import json_item
from bokeh.models import DataTable, Div, Label
from bokeh.plotting import figure

from engine.metrics import timeseries
from webapp.dashboards.figures import gantt, heatmaps
from webapp.dashboards.figures.distributions import ecdf, wait_cdf_figure
from webapp.dashboards.figures.fairness import fairness_figure
from webapp.dashboards.figures.metrics_table import metrics_rows, metrics_table
from webapp.dashboards.figures.style import duration_tick_text, log_edges, policy_colours
from webapp.dashboards.figures.sweep import sweep_trend, value_label
from webapp.dashboards.figures.timelines import PolicyTimelines, linked_timelines, step_points

from .conftest import make_schedule


def figures_in(layout) -> list[figure]:
    return list(layout.select({"type": figure}))


def figure_titled(layout, prefix: str) -> figure:
    return next(f for f in figures_in(layout) if f.title.text.startswith(prefix))


def divs_text(layout) -> str:
    return " ".join(d.text for d in layout.select({"type": Div}))


# ---- palette -------------------------------------------------------------------------------------

def test_policy_colours_are_distinct_and_stable():
    colours = policy_colours(["a", "b", "c"])
    assert len(set(colours.values())) == 3
    assert policy_colours(["a", "b", "c"]) == colours


# ---- CDF -----------------------------------------------------------------------------------------

def test_ecdf_by_hand():
    x, y = ecdf(np.array([0, 10, 10, 30]))
    assert x.tolist() == [0, 10, 30]
    assert y.tolist() == [0.25, 0.75, 1.0]


def test_ecdf_downsampled_still_reaches_one_at_the_maximum():
    values = np.arange(100_000)
    x, y = ecdf(values, max_points=500)
    assert len(x) <= 500
    assert y[-1] == 1.0 and x[-1] == 99_999
    assert np.all(np.diff(y) > 0)


def test_wait_cdf_draws_one_curve_per_policy_ending_at_one(small_schedules):
    layout = wait_cdf_figure({k: s["wait"].to_numpy() for k, s in small_schedules.items()})
    fig = figures_in(layout)[0]
    curves = [r.data_source.data for r in fig.renderers]
    assert len(curves) == 2
    assert all(c["y"][-1] == 1.0 for c in curves)
    assert "EASY: 50% of jobs waited under 1 s" in divs_text(layout)


# ---- metrics table -------------------------------------------------------------------------------

def test_metrics_table_one_column_per_policy_and_best_in_bold():
    summaries = {"FCFS": {"mean_wait": 120.0, "utilization": 0.5, "jain_bsld": 0.9},
                 "EASY": {"mean_wait": 30.0, "utilization": 0.75, "jain_bsld": None}}
    rows = metrics_rows(summaries)
    assert list(rows) == ["metric", "FCFS", "EASY"]
    wait_row = rows["metric"].index("Mean wait")
    assert rows["FCFS"][wait_row] == "2.0 min"
    assert rows["EASY"][wait_row] == "<b>30 s</b>"
    util_row = rows["metric"].index("Utilization")
    assert rows["EASY"][util_row] == "<b>75.0 %</b>"
    jain_row = next(i for i, m in enumerate(rows["metric"]) if m.startswith("Jain"))
    assert rows["EASY"][jain_row] == "–"
    assert rows["FCFS"][jain_row] == "0.900"  # a single value is not "best"
    table = metrics_table(summaries).select_one({"type": DataTable})
    assert [c.title for c in table.columns] == ["metric", "FCFS", "EASY"]


# ---- linked time axis ----------------------------------------------------------------------------

def _timelines(schedules):
    return {label: PolicyTimelines(busy=timeseries.busy_processors(s), queue=timeseries.queue_length(s),
                                   occupancy=timeseries.occupancy_by(s, "group"), notes=["example note"])
            for label, s in schedules.items()}


def test_linked_timelines_share_one_x_range_and_export_as_one_item(small_schedules):
    layout = linked_timelines(_timelines(small_schedules), 4, allocation_kind="group", targets={"0": 0.5})
    figs = figures_in(layout)
    assert len(figs) == 1 + 1  # utilization and queue (panels of one figure), ONE occupancy plot with a button per policy
    assert len({id(f.x_range) for f in figs}) == 1
    item = json_item(layout, "timelines")  # raises if the linked plots were split across documents
    assert item["target_id"] == "timelines"
    assert "FCFS: example note" in divs_text(layout)


def test_occupancy_buttons_swap_in_each_policys_stacked_data(small_schedules):
    from bokeh.models import CustomJS, RadioButtonGroup

    lines = _timelines(small_schedules)
    layout = linked_timelines(lines, 4, allocation_kind="group")
    buttons = layout.select_one({"type": RadioButtonGroup})
    assert buttons.labels == ["FCFS", "EASY"] and buttons.active == 0
    callback = buttons.js_property_callbacks["change:active"][0]
    assert isinstance(callback, CustomJS)
    fcfs, easy = callback.args["sources"]
    # EASY starts user 1's 1-processor job (group 1) at t=20 instead of 150: at t=20 group 1 holds
    # 2 (job 1) + 1 = 3 processors under EASY and only 2 under FCFS.
    names = [str(n) for n in lines["FCFS"].occupancy.columns if n != "time"]
    band = f"band{names.index('1')}"
    def at(source, t):
        return source.data[band][max(k for k, x in enumerate(source.data["x"]) if x * 3600.0 <= t)]

    assert at(fcfs, 20) == 2 and at(easy, 20) == 3
    assert list(easy.data["total"]) == list(np.sum([easy.data[k] for k in easy.data if k.startswith("band")], axis=0))


def test_downsampled_series_are_announced():
    from webapp.dashboards.comparison import policy_timelines
    rng = np.random.default_rng(0)
    n = 3000
    submit = np.sort(rng.integers(0, 10**6, n))
    schedule = make_schedule([(int(u), int(s), int(s) + 5, 100, 1) for u, s in zip(rng.integers(0, 3, n), submit)])
    lines = policy_timelines(schedule, key="user", max_points=500)
    assert len(lines.busy) <= 500 and len(lines.occupancy) <= 500
    assert lines.notes[0].startswith("utilization ") and lines.notes[0].endswith(" steps")
    layout = linked_timelines({"X": lines}, 4)
    assert "Downsampled for display" in divs_text(layout)


def test_utilization_is_busy_over_capacity(small_schedules):
    layout = linked_timelines(_timelines({"FCFS": small_schedules["FCFS"]}), 4)
    steps = figure_titled(layout, "Utilization and queue length")
    utilization, queue = steps.renderers[0].data_source.data, steps.renderers[1].data_source.data
    assert utilization["value"].max() == 1.0  # the 4-processor job fills the machine
    assert utilization["value"][0] == 0.5     # first job: 2 of 4
    # the utilization panel sits above the queue panel: its 0 % is above the longest queue's top
    assert utilization["y"][0] - 0.5 > queue["y"].max()
    assert queue["value"].max() == 3          # FCFS at t=30: jobs 2, 3 and 4 wait


def test_step_points_hold_each_value_until_the_next_time():
    xs, ys = step_points(np.array([0, 10, 20]), np.array([1, 3, 0]))
    assert xs.tolist() == [0, 10, 10, 20, 20]
    assert ys.tolist() == [1, 1, 3, 3, 0]


def test_occupancy_target_line_at_cumulative_target(small_schedules):
    layout = linked_timelines(_timelines({"FCFS": small_schedules["FCFS"]}), 4, targets={"1": 0.25})
    occupancy = figure_titled(layout, "Processors in use by group")
    target_lines = [r for r in occupancy.renderers if getattr(r.glyph, "line_dash", None) == [6]]
    assert len(target_lines) == 1
    assert list(target_lines[0].data_source.data["y"]) == [1.0, 1.0]  # 25 % of 4 processors
    stacked = [r for r in occupancy.renderers if type(r.glyph).__name__ == "VArea" and r.glyph.fill_alpha > 0]
    assert len(stacked) == 2  # plus one transparent band that carries the hover


# ---- heat maps -----------------------------------------------------------------------------------

def test_heat_map_cell_mean_equals_hand_computed_mean():
    schedule = make_schedule([(1, 0, 10, 100, 4), (1, 0, 30, 110, 4), (2, 0, 1000, 5000, 64)])
    size_edges = np.array([1, 2, 8, 128], dtype=float)
    runtime_edges = np.array([1, 50, 200, 10_000], dtype=float)
    grid = heatmaps.mean_wait_grid(schedule, size_edges, runtime_edges)
    assert grid.mean[1, 1] == pytest.approx(20.0)   # runtimes 100 and 110, 4 procs: waits 10 and 30
    assert grid.count[1, 1] == 2
    assert grid.mean[2, 2] == 1000.0
    assert np.isnan(grid.mean[0, 0])


def test_fifteen_log_bins_and_ratio_between_policies(small_schedules):
    size_edges, runtime_edges = heatmaps.grid_edges(small_schedules)
    assert len(size_edges) == len(runtime_edges) == 16
    assert np.allclose(np.diff(np.log(runtime_edges)), np.log(runtime_edges[1] / runtime_edges[0]))
    grids = {k: heatmaps.mean_wait_grid(s, size_edges, runtime_edges) for k, s in small_schedules.items()}
    ratio = heatmaps.wait_ratio(grids["FCFS"], grids["EASY"])
    job = small_schedules["FCFS"].iloc[2]  # waits 130 s under FCFS, 0 s under EASY
    r = np.searchsorted(runtime_edges, job["runtime"], side="right") - 1
    s = np.searchsorted(size_edges, job["procs"], side="right") - 1
    assert ratio[r, s] == pytest.approx(131.0)
    layout = heatmaps.ratio_heatmap("FCFS", grids["FCFS"], "EASY", grids["EASY"])
    assert figures_in(layout)[0].title.text == "Wait ratio FCFS / EASY"
    maps = heatmaps.wait_heatmaps(grids)
    figs = figures_in(maps)
    assert len(figs) == 1      # both runs' maps: panels of one figure, on the same bins and axes
    cells = figs[0].renderers[0].data_source.data
    fcfs = [i for i, run in enumerate(cells["run"]) if run == "FCFS"]
    easy = [i for i, run in enumerate(cells["run"]) if run == "EASY"]
    assert len(fcfs) == len(easy) == np.isfinite(grids["FCFS"].mean).sum()
    cell = next(i for i in fcfs if cells["left"][i] == size_edges[s] and cells["bottom"][i] == runtime_edges[r])
    assert cells["value"][cell] == pytest.approx(130.0)  # the FCFS panel's cell of that job: its 130 s wait
    # the EASY panel is the FCFS panel moved right by one panel: the same cell at the same height
    twin = next(i for i in easy if cells["left"][i] == size_edges[s] and cells["bottom"][i] == runtime_edges[r])
    assert cells["y0"][twin] == cells["y0"][cell] and cells["x0"][twin] > cells["x1"][cell]
    assert cells["x0"][cell] == pytest.approx(np.log10(size_edges[s]))
    assert {label.text for label in maps.select({"type": Label})} == {"Mean wait — FCFS", "Mean wait — EASY"}
    assert duration_tick_text(600) == "10 min" and duration_tick_text(6 * 86400) == "6 days"
    json_item(maps)


def test_log_edges_cover_the_maximum():
    edges = log_edges(np.array([1, 7, 1000]), 15)
    assert edges[0] == 1 and edges[-1] >= 1000 and len(edges) == 16


def test_log_edges_start_at_the_smallest_value_not_at_the_floor():
    # sizes 8..1024: 15 bins of ratio (1024/8)^(1/15) = 128^(1/15) ≈ 1.38, none below 8
    edges = log_edges(np.array([8, 64, 1024]), 15)
    assert edges[0] == pytest.approx(8) and edges[-1] >= 1024
    assert edges[1] / edges[0] == pytest.approx(128 ** (1 / 15), rel=1e-5)
    assert log_edges(np.array([0, 0.5, 30]), 3)[0] == 1.0  # values under the floor: the floor


# ---- Gantt ---------------------------------------------------------------------------------------

def test_processor_numbering_reuses_released_processors_and_splits_fragments():
    # capacity 4: A[0,2) until 10, B[2,3) until 20, A ends → C needs 3: gets [0,2) + [3,4)
    rects = gantt.number_processors(np.array([0, 0, 10]), np.array([10, 20, 30]), np.array([2, 1, 3]), 4)
    pieces = sorted(zip(rects.job.tolist(), rects.low.tolist(), rects.high.tolist()))
    assert pieces == [(0, 0, 2), (1, 2, 3), (2, 0, 2), (2, 3, 4)]


def test_gantt_draws_one_rectangle_per_piece_on_a_canvas(small_schedules):
    layout = gantt.gantt_figure(small_schedules, 4, gantt.GanttWindow(0, 2000))
    figs = figures_in(layout)
    # one figure, a panel per run (six CTC-SP2 Gantt figures cost Chromium most of a second to build);
    # canvas, not WebGL: the pages need no bokeh-gl bundle (benchmarks/dashboard_speed.py)
    assert len(figs) == 1 and figs[0].output_backend == "canvas"
    data = figs[0].renderers[0].data_source.data
    assert list(data["panel"]).count(0) == 4 and list(data["panel"]).count(1) == 4     # FCFS's panel, EASY's
    # FCFS is the top panel: its rectangles sit one panel higher than EASY's, inside 0..4 processors of it
    fcfs = [(b, t) for b, t, panel in zip(data["bottom"], data["top"], data["panel"]) if panel == 0]
    easy = [(b, t) for b, t, panel in zip(data["bottom"], data["top"], data["panel"]) if panel == 1]
    assert list(data["shade"][:2]) == [1, 2]              # colour = user (1 and 2) through the palette mapper
    assert min(b for b, _ in easy) == 0 and max(t for _, t in easy) <= 4
    assert min(b for b, _ in fcfs) > 4 and max(t for _, t in fcfs) - min(b for b, _ in fcfs) == pytest.approx(4)
    assert {label.text for label in layout.select({"type": Label})} == {"FCFS", "EASY"}   # each panel named
    assert "AGGREGATED" not in divs_text(layout)


def test_gantt_window_keeps_only_jobs_running_in_it(small_schedules):
    window = gantt.jobs_in_window(small_schedules["FCFS"], 120, 140)
    assert window["job_id"].tolist() == [2]


def test_gantt_aggregates_above_the_threshold_and_says_so(small_schedules):
    layout = gantt.gantt_figure(small_schedules, 4, gantt.GanttWindow(0, 2000), max_rectangles=5)
    text = divs_text(layout)
    assert "AGGREGATED" in text and "8 jobs in this window exceed the 5-rectangle limit" in text
    figs = figures_in(layout)
    assert len(figs) == 1 and "aggregated" in figs[0].title.text
    assert set(figs[0].renderers[0].data_source.data["panel"]) == {0, 1}


def test_aggregate_mean_in_use_per_bucket_by_hand():
    # a 2-processor job over [0, 15) and a 1-processor job over [5, 10), buckets of 10 s
    used = gantt.mean_in_use_per_bucket(np.array([0.0, 5.0]), np.array([15.0, 10.0]), np.array([2.0, 1.0]),
                                        np.array([0.0, 10.0, 20.0]))
    assert used.tolist() == [2.5, 1.0]


# ---- fairness ------------------------------------------------------------------------------------

def test_fairness_plots_every_policy_for_the_top_users(small_schedules):
    from engine.metrics.fairness import per_user
    per = {k: per_user(s) for k, s in small_schedules.items()}
    layout = fairness_figure(per, jain={"FCFS": 0.5, "EASY": 0.75}, top=2)
    fig = figure_titled(layout, "Mean wait and mean bounded slowdown per user")   # both panels, one user axis
    assert list(fig.x_range.factors) == ["1", "2"]  # user 1 has the most jobs
    fcfs = fig.renderers[0].data_source.data
    assert fcfs["mean_wait"].tolist() == [65.0, 90.0]  # user 1 waits 0 and 130 s; user 2 waits 90 s
    # the mean wait panel is above the slowdown panel: every wait dot above every slowdown dot
    assert min(fcfs["mean_wait_y"]) > max(fcfs["mean_bsld_y"])
    assert "FCFS (Jain 0.500)" in [item.label["value"] for item in fig.legend[0].items]


# ---- sweep ---------------------------------------------------------------------------------------

def test_sweep_trend_in_sweep_order_with_infinity_and_gaps():
    layout = sweep_trend("masc", [1, 5, float("inf")],
                         {"LXF": [{"mean_wait": 10.0}, None, {"mean_wait": 30.0}]},
                         baselines={"EASY": {"mean_wait": 20.0}})
    first = figure_titled(layout, "Mean wait")
    assert list(first.x_range.factors) == ["1", "5", "∞"]
    y = first.renderers[0].data_source.data["y"]
    assert y[0] == 10.0 and np.isnan(y[1]) and y[2] == 30.0
    assert "LXF at 5" in divs_text(layout)
    baseline = first.renderers[-1].data_source.data
    assert list(baseline["y"]) == [20.0, 20.0]
    assert value_label(None) == "∞" and value_label(2.5) == "2.5"


# ---- trace characterization ----------------------------------------------------------------------

def _jobs(n: int = 50) -> pd.DataFrame:
    rng = np.random.default_rng(1)
    return pd.DataFrame({
        "job_id": np.arange(n), "submit": np.arange(n) * 3600, "runtime": rng.integers(0, 5000, n),
        "requested_time": rng.integers(1, 10_000, n), "procs": rng.integers(1, 64, n),
        "user": rng.integers(1, 30, n), "group": 1, "queue": 1, "partition": 1, "killed": False,
    })


def test_arrivals_use_the_header_clock():
    from webapp.dashboards.figures.trace import local_arrivals
    # 1 Jan 2024 00:00 UTC was a Monday, 01:00 in Stockholm
    arrivals = local_arrivals(np.array([0, 86400]), {"UnixStartTime": "1704067200",
                                                     "TimeZoneString": "Europe/Stockholm"})
    assert arrivals.hour.tolist() == [1, 1]
    assert arrivals.weekday.tolist() == [0, 1]
    no_calendar = local_arrivals(np.array([0, 7200, 90000]), {})
    assert no_calendar.hour.tolist() == [0, 2, 1] and no_calendar.weekday.size == 0


def test_arrivals_of_an_accounting_log_count_its_start_time_once():
    """The OpenPBS log's submits are epochs and its metadata names the first as UnixStartTime: its
    jobs of Saturday 2024-12-21 17:58-19:58 (UTC+01:00) were drawn on Tuesday 10:00-12:00 when the
    start was added again."""
    from engine.api import read_trace
    from webapp.dashboards.figures.trace import local_arrivals
    log = read_trace(SHARED_DATA / "metacentrum" / "fairsharesim" / "OpenPBS.log")
    arrivals = local_arrivals(log.jobs["submit"].to_numpy(), log.metadata)
    assert set(arrivals.weekday.tolist()) == {5}                    # Saturday
    assert min(arrivals.hour) == 17 and max(arrivals.hour) == 19
    assert arrivals.clock_note == "local time, UTC+01:00"


def test_user_share_top_n_plus_others_sums_to_one():
    from webapp.dashboards.figures.trace import user_core_hours
    shares = user_core_hours(_jobs(), top=5)
    assert len(shares) == 6 and shares["user"].iloc[-1].startswith("others")
    assert shares["share"].sum() == pytest.approx(1.0)


def test_trace_characterization_is_one_item_and_notes_what_it_leaves_out():
    from webapp.dashboards.figures.trace import requested_vs_actual, trace_characterization
    jobs = _jobs()
    layout = trace_characterization(jobs, {}, {"rejected": {"zero processors": 3}, "repaired": {}, "bad_lines": 1})
    json_item(layout)
    tables = list(layout.select({"type": DataTable}))
    assert tables[0].source.data["reason"] == ["zero processors", "unreadable lines"]
    text = divs_text(layout)
    assert "no weekday chart" in text
    sampled = requested_vs_actual(_jobs(300), max_points=100)
    assert "random sample of 100 of" in divs_text(sampled)


# ---- axes ----------------------------------------------------------------------------------------

def test_no_plain_number_axis_writes_scientific_notation():
    from bokeh.models import BasicTickFormatter, DatetimeAxis, LinearAxis, NumeralTickFormatter

    from engine.api import read_trace
    from webapp.dashboards.figures import trace_characterization
    from webapp.dashboards.figures.style import new_figure
    from tests.webapp.conftest import DEMO_SWF

    workload = read_trace(DEMO_SWF)
    jobs = workload.jobs.assign(runtime=workload.jobs["runtime"] * 1000, submit=workload.jobs["submit"] * 1000)
    plain = [axis for fig in figures_in(trace_characterization(jobs, workload.metadata))
             for axis in [*fig.xaxis, *fig.yaxis] if type(axis) is LinearAxis]
    assert plain, "the characterization has plain number axes"
    assert not [axis for axis in plain if isinstance(axis.formatter, BasicTickFormatter)
                and axis.formatter.use_scientific]
    fig = new_figure("dates", x_axis_type="datetime")
    assert isinstance(fig.yaxis[0].formatter, NumeralTickFormatter) and fig.yaxis[0].formatter.format == "0,0.[000]"
    assert isinstance(fig.xaxis[0], DatetimeAxis) and not isinstance(fig.xaxis[0].formatter, NumeralTickFormatter)


# ---- two runs job by job -------------------------------------------------------------------------

def test_job_diff_puts_users_and_classes_in_one_figure_and_the_moved_jobs_in_an_html_table(small_schedules):
    from engine.api import job_diff
    from webapp.core.time_axis import TimeAxis
    from webapp.dashboards.figures.job_diff import job_diff_layout

    layout = job_diff_layout(job_diff(small_schedules["FCFS"], small_schedules["EASY"]), "FCFS", "EASY",
                             policy_colours(["FCFS", "EASY"]), TimeAxis(), (0, 2000))
    gains = figure_titled(layout, "Users and job classes")
    groups = {group for group, _ in gains.y_range.factors}
    assert groups == {"Users", "Job classes"}
    data = gains.renderers[0].data_source.data
    # job 3 (user 1) starts 130 s earlier under EASY: user 1 gains 130 s, the only move
    user_1 = data["name"].index(("Users", "user 1"))
    assert data["hours"][user_1] == pytest.approx(-130 / 3600)
    assert not list(layout.select({"type": DataTable}))      # the page loads no bokeh-tables bundle
    table = next(d.text for d in layout.select({"type": Div}) if "moved most" in d.text)
    assert "<td class='num'>3</td>" in table and "-0.04" in table   # job 3, B − A = −130 s = −0.04 h
