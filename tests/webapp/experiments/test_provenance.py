"""Every export says where it comes from: the schedule CSV (web page and API alike) and the metrics CSV
begin with ``#`` lines naming trace (and its sha256), machine, queues, policy with every parameter,
seed, window, load factor, engine version and the command line, which gives the same schedule."""

from __future__ import annotations

import io
import json
import shlex
import shutil

import pandas as pd
import pytest
from django.test import Client
from django.urls import reverse

from engine import api
from engine.cli import main as engine_main
from webapp.accounts.models import Token

from ..conftest import make_experiment

pytestmark = pytest.mark.django_db


def provenance(text: str) -> dict[str, str]:
    """The ``# key: value`` lines at the top of a download."""
    items = {}
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        key, sep, value = line[2:].partition(": ")
        if sep:
            items[key] = value
    return items


@pytest.fixture
def windowed(alice, demo_trace):
    return make_experiment(alice, demo_trace, [{"preset": "easy", "params": {"backfill_bound": 3}}, "fcfs"],
                           name="windowed", days="0.05:", seed=7, load_factor=1.5)


def test_the_schedule_csv_names_everything_it_came_from(alice, alice_client, windowed, demo_trace):
    run = windowed.runs.order_by("position").first()
    script = Client(HTTP_AUTHORIZATION=f"Token {Token.issue(alice)}")
    for client, url in ((alice_client, reverse("experiments:run_schedule_csv", args=[run.pk])),
                        (script, reverse("api:run_schedule_csv", args=[run.pk]))):
        response = client.get(url)
        assert response.status_code == 200
        text = b"".join(response.streaming_content).decode()
        items = provenance(text)
        assert items["trace"] == f"demo (#{demo_trace.pk}), uploaded as demo.swf"
        assert items["trace sha256"] == demo_trace.sha256 and len(demo_trace.sha256) == 64
        assert items["machine"] == "16 processors: one pool of 16 processors, allocation rule count"
        assert items["queues"].startswith("none")
        assert items["seed"] == "7"
        assert items["window"] == ("jobs submitted from day 0.05 to the end after the first submit (--days 0.05:): "
                                   "2023-11-15 00:25 to the end of the trace (Europe/Prague)")
        assert items["load factor"] == "1.5 (inter-arrival times divided by it)"
        assert items["engine version"] == api.__version__
        assert items["times"] == "seconds since 2023-11-14 23:13 (Europe/Prague) in the trace's own time base"
        policy = json.loads(items["policy"])
        assert policy["preset"] == "easy" and policy["params"] == {"backfill_bound": 3, "drop_interactive": False,
                                                                    "deadline_fraction": 0.0}
        assert items["jobs"].startswith(f"{run.summary['jobs']} simulated; left out in this window: "
                                        "more processors than the machine: 1")   # job 30; job 9 is before day 0.05
        schedule = pd.read_csv(io.StringIO(text), comment="#")
        assert len(schedule) == run.summary["jobs"] and list(schedule.columns[:3]) == ["job_id", "user", "submit"]


def test_the_command_line_gives_the_same_schedule(alice_client, windowed, demo_trace, tmp_path):
    for run in windowed.runs.all():
        text = b"".join(alice_client.get(reverse("experiments:run_schedule_csv", args=[run.pk])).streaming_content)
        command = shlex.split(provenance(text.decode())["command"])
        assert command[:4] == ["python", "-m", "engine", "simulate"] and command[4] == "demo.swf"
        shutil.copy(demo_trace.path, tmp_path / "demo.swf")     # the user's copy, under its upload name
        argv = [str(tmp_path / a) if a in ("demo.swf", f"run-{run.pk}-schedule.csv") else a for a in command[3:]]
        assert engine_main([*argv, "--no-parse-cache"]) == 0
        ours = pd.read_csv(tmp_path / f"run-{run.pk}-schedule.csv")
        pd.testing.assert_frame_equal(ours, pd.read_csv(io.BytesIO(text), comment="#"))


def test_the_metrics_csv_has_units_and_one_column_per_reason_counted_in_the_window(alice, alice_client, demo_trace):
    whole = make_experiment(alice, demo_trace, ["fcfs", "easy"], name="whole")
    early = make_experiment(alice, demo_trace, ["fcfs"], name="early", days="0:0.05")
    text = alice_client.get(reverse("experiments:metrics_csv", args=[whole.pk])).content.decode()
    items = provenance(text)
    assert items["trace sha256"] == demo_trace.sha256 and items["window"] == "the whole trace"
    assert any(line.startswith("# run ") and "command: python -m engine simulate demo.swf" in line
               for line in text.splitlines())
    table = pd.read_csv(io.StringIO(text), comment="#")
    assert list(table["Policy"]) == ["fcfs", "easy"]
    assert {"Mean wait (s)", "Utilization (fraction of capacity)", "Simulation time (s)", "Jobs simulated (jobs)",
            "Left out: runtime missing or negative (jobs)", "Left out: more processors than the machine (jobs)"} \
        <= set(table.columns)
    assert list(table["Left out: runtime missing or negative (jobs)"]) == [1, 1]
    assert table["Mean wait (s)"].tolist() == [r.summary["mean_wait"] for r in whole.runs.order_by("position")]
    windowed = pd.read_csv(io.StringIO(alice_client.get(reverse("experiments:metrics_csv", args=[early.pk]))
                                       .content.decode()), comment="#")
    # days 0-0.05 hold job 9 (no runtime) but not job 30 (too large, submitted at 5 h): no column for it
    assert "Left out: more processors than the machine (jobs)" not in windowed.columns
    assert windowed["Left out: runtime missing or negative (jobs)"].tolist() == [1]
    assert windowed["Jobs left out (jobs)"].tolist() == [1]


def test_the_html_report_has_a_section_with_all_of_it(alice_client, windowed, demo_trace):
    text = alice_client.get(reverse("dashboards:comparison_download", args=[windowed.pk])).content.decode()
    section = text[text.index("Where these results come from"):]
    for shown in (demo_trace.sha256, "one pool of 16 processors", "(--days 0.05:)", "inter-arrival times divided",
                  api.__version__, "python -m engine simulate demo.swf --procs 16", "backfill_bound"):
        assert shown in section, shown


def test_the_html_report_carries_the_fidelity_table_where_there_is_a_recorded_run(alice, alice_client, demo_trace):
    experiment = make_experiment(alice, demo_trace, ["easy"], name="with recorded", with_recorded=True)
    assert experiment.runs.filter(policy__preset="recorded").exists()
    text = alice_client.get(reverse("dashboards:comparison_download", args=[experiment.pk])).content.decode()
    # an archive (SWF) trace: the fidelity table is a footnote (an accounting log's is "Against what really happened")
    assert text.index("against the recorded schedule") < text.index("Where these results come from")
