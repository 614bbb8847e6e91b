"""A PBS site's own files: qmgr's print server, sched_config and the fair-share resource_group tree."""

from __future__ import annotations

import pytest

from engine.cli import main
from engine.platform.pbsconf import describe_pbs_site, read_pbs_site, read_print_server
from engine.workload.errors import WorkloadError

PRINT_SERVER = """\
#
# Create queues and set their attributes.
#
#
# Create and define queue workq
#
create queue workq
set queue workq queue_type = Execution
set queue workq priority = 50
set queue workq resources_max.walltime = 24:00:00
set queue workq resources_max.ncpus = 64
set queue workq resources_default.walltime = 01:00:00
set queue workq max_run = [u:PBS_GENERIC=10]
set queue workq max_run_res.ncpus = [u:PBS_GENERIC=128],[u:alice=256]
set queue workq enabled = True
set queue workq started = True
#
create queue long
set queue long queue_type = Execution
set queue long priority = 10
set queue long resources_max.walltime = 168:00:00
set queue long resources_min.walltime = 24:00:01
set queue long max_queued = [u:PBS_GENERIC=20]
set queue long enabled = True
set queue long started = False
#
create queue routeq
set queue routeq queue_type = Route
set queue routeq route_destinations = workq
set queue routeq route_destinations += long
set queue routeq enabled = True
#
# Set server attributes.
#
set server scheduling = True
set server default_queue = routeq
set server max_run = [o:PBS_ALL=500],[u:PBS_GENERIC=40]
set server backfill_depth = 10
set server log_events = 511
"""


def write(tmp_path, name, text):  # noqa: ANN001, ANN201
    path = tmp_path / name
    path.write_text(text)
    return path


def test_queues_limits_and_routes(tmp_path):
    server = read_print_server(write(tmp_path, "server.txt", PRINT_SERVER))
    workq, long, route = server.queues["workq"], server.queues["long"], server.queues["routeq"]
    assert workq.max_walltime() == 86400 and workq.resources_max["ncpus"] == "64" and workq.priority == 50
    assert workq.max_run.generic_user() == 10
    assert workq.max_run_res["ncpus"].values == {("u", "PBS_GENERIC"): 128, ("u", "alice"): 256}
    assert long.max_walltime() == 168 * 3600 and long.resources_min["walltime"] == "24:00:01"
    assert long.max_queued.generic_user() == 20 and not long.started
    assert route.is_route and route.route_destinations == ["workq", "long"]      # += appends
    assert server.default_queue == "routeq" and server.backfill_depth == 10
    assert server.max_run.overall() == 500 and server.max_run.generic_user() == 40
    assert server.unmodelled == {"scheduling": (35, "True"), "log_events": (39, "511")}


@pytest.mark.parametrize(("text", "where"), [
    ("set queue q priority = 1\n", "line 1: queue q is set before it is created"),
    ("create queue q\nset queue q priority = high\n", "line 2: field priority: expected a whole number"),
    ("create queue q\nset queue q max_run = [u:PBS_GENERIC=ten]\n", "line 2: field max_run: expected a limit"),
    ("create queue q\nset queue q resources_max.walltime = 1 day\n", "line 2: field resources_max.walltime"),
    ("create queue q\nset queue q queue_type = Batch\n", "line 2: field queue_type: expected Execution or Route"),
    ("create queue q\nset queue q route_destinations = nowhere\n", "line 1: field route_destinations: route queue q"),
    ("create queue q\ncreate queue q\n", "line 2: queue q created twice"),
    ("create queue q\ndelete queue q\n", "line 2: expected 'create queue NAME'"),
    ("set server default_queue = q\n", "no 'create queue' line"),
])
def test_bad_lines_name_file_line_and_attribute(tmp_path, text, where):
    with pytest.raises(WorkloadError) as caught:
        read_print_server(write(tmp_path, "server.txt", text))
    assert where in str(caught.value) and str(caught.value).startswith(str(tmp_path / "server.txt"))


SCHED_CONFIG = """\
round_robin: False all
by_queue: True prime
strict_ordering: false ALL
fair_share: true ALL
fairshare_usage_res: cput
fairshare_entity: euser
fairshare_decay_time: 24:00:00
fairshare_decay_factor: 0.5
job_sort_key: "ncpus HIGH" ALL
job_sort_key: "walltime LOW" ALL
preempt_queue_prio: 150
"""

RESOURCE_GROUP = """\
physics 10 root 60
chem 20 root 30
alice 11 physics 1
bob 21 chem 2
"""


def test_sched_config_and_the_fair_share_tree(tmp_path):
    server = read_pbs_site(write(tmp_path, "server.txt", PRINT_SERVER),
                           sched_config=write(tmp_path, "sched_config", SCHED_CONFIG),
                           resource_group=write(tmp_path, "resource_group", RESOURCE_GROUP))
    assert server.sched["fair_share"] == "true" and server.sched["strict_ordering"] == "false"
    assert server.sched["fairshare_decay_factor"] == "0.5" and server.sched["fairshare_usage_res"] == "cput"
    assert server.sched["job_sort_key"] == '"ncpus HIGH"; "walltime LOW"'.replace('"', "")
    assert server.sched_unmodelled == {"preempt_queue_prio": (11, "150")}
    assert server.groups == [("physics", 10, "root", 60), ("chem", 20, "root", 30), ("alice", 11, "physics", 1),
                             ("bob", 21, "chem", 2)]


@pytest.mark.parametrize(("name", "text", "where"), [
    ("sched_config", "fairshare_decay_factor: 2\n", "line 1: field fairshare_decay_factor: expected a number between 0 and 1"),
    ("sched_config", "no colon here\n", "line 1: expected 'key: value"),
    ("resource_group", "alice 1 physics 1\n", "line 1: field parent: parent physics is not defined above"),
    ("resource_group", "alice 1 root\n", "line 1: expected 'name id parent shares'"),
    ("resource_group", "alice x root 1\n", "line 1: field id: expected a whole number"),
])
def test_bad_scheduler_files_name_their_line(tmp_path, name, text, where):
    server_file = write(tmp_path, "server.txt", PRINT_SERVER)
    with pytest.raises(WorkloadError, match=where):
        read_pbs_site(server_file, **{name: write(tmp_path, name, text)})


def test_the_site_command_prints_a_pbs_site(tmp_path, capsys):
    args = ["site", "--pbs-server", str(write(tmp_path, "server.txt", PRINT_SERVER)),
            "--sched-config", str(write(tmp_path, "sched_config", SCHED_CONFIG))]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "3 queues, default routeq" in out and "routeq (route) -> workq, long" in out
    assert out.index("  workq:") < out.index("  long (stopped):")         # by priority
    assert "max_run [o:PBS_ALL=500],[u:PBS_GENERIC=40]" in out and "backfill_depth 10" in out
    assert "not modelled (read, not used): scheduling (line 35), log_events (line 39), sched_config preempt_queue_prio" in out


def test_limits_on_queued_jobs_and_their_resources_are_read(tmp_path):
    # max_queued_res, queued_jobs_threshold and queued_jobs_threshold_res of a queue and of the
    # server; a resource other than ncpus in one is listed as not followed
    text = ("create queue workq\nset queue workq queue_type = Execution\n"
            "set queue workq max_queued_res.ncpus = [u:PBS_GENERIC=8]\n"
            "set queue workq queued_jobs_threshold = \"[u:PBS_GENERIC=3],[o:PBS_ALL=20]\"\n"
            "set queue workq queued_jobs_threshold_res.mem = [o:PBS_ALL=100gb]\n"
            "set server queued_jobs_threshold_res.ncpus = [o:PBS_ALL=64]\n")
    # a size is not a count: on ncpus or a count of jobs it is refused (file, line and field named);
    # on mem it is PBS's own form (read with its unit, listed as not followed)
    with pytest.raises(WorkloadError) as error:
        read_print_server(write(tmp_path, "bad.txt", text.replace("ncpus = [u:PBS_GENERIC=8]", "ncpus = [u:PBS_GENERIC=8gb]")))
    assert "bad.txt, line 3: field max_queued_res.ncpus: expected a limit like [u:PBS_GENERIC=10]" in str(error.value)
    server = read_print_server(write(tmp_path, "server.txt", text))
    workq = server.queues["workq"]
    assert workq.queued_jobs_threshold_res["mem"].text() == "[o:PBS_ALL=100gb]"
    assert workq.max_queued_res["ncpus"].values == {("u", "PBS_GENERIC"): 8}
    assert workq.queued_jobs_threshold.values == {("u", "PBS_GENERIC"): 3, ("o", "PBS_ALL"): 20}
    assert server.queued_jobs_threshold_res["ncpus"].overall() == 64
    assert not workq.unmodelled and not server.unmodelled
    from engine.platform.pbsconf import describe_pbs_site
    text = "\n".join(describe_pbs_site(server))
    assert "max_queued_res.ncpus [u:PBS_GENERIC=8]" in text and "queued_jobs_threshold_res.ncpus [o:PBS_ALL=64]" in text
    assert "queue workq queued_jobs_threshold_res.mem (of resources only ncpus is followed)" in text.split("not modelled")[1]


def test_print_servers_plus_equals_adds_entries_to_a_limit(tmp_path):
    # print server writes "[u:PBS_GENERIC=10],[u:alice=5]" as two lines (qmgr.c splits the value at its
    # commas): the second adds to the first; -= takes an entry off
    server = read_print_server(write(tmp_path, "server.txt", """create queue workq
set queue workq max_run = [u:PBS_GENERIC=10]
set queue workq max_run += [u:alice=5]
set queue workq max_run_res.ncpus = [o:PBS_ALL=64]
set queue workq max_run_res.ncpus += [u:bob=8]
set queue workq max_run_res.ncpus -= [o:PBS_ALL=64]
set server max_queued = [u:PBS_GENERIC=100]
set server max_queued += [g:physics=500]
set server resources_max.walltime = 48:00:00
"""))
    workq = server.queues["workq"]
    assert workq.max_run.values == {("u", "PBS_GENERIC"): 10, ("u", "alice"): 5}
    assert workq.max_run_res["ncpus"].values == {("u", "bob"): 8}
    assert server.max_queued.values == {("u", "PBS_GENERIC"): 100, ("g", "physics"): 500}
    assert server.resources_max == {"walltime": "48:00:00"} and not server.unmodelled


def test_a_bad_server_resources_max_names_file_line_and_key(tmp_path):
    with pytest.raises(WorkloadError) as caught:
        read_print_server(write(tmp_path, "server.txt", "create queue q\nset server resources_max.walltime = soon\n"))
    assert str(caught.value) == (f"{tmp_path / 'server.txt'}, line 2: field resources_max.walltime: expected a "
                                 "duration like 01:30:00 or 2-00:00:00, got 'soon'")


def test_settings_read_but_not_followed_are_listed_with_why(tmp_path):
    from engine.platform.pbsconf import pbs_unfollowed_keys
    server = read_pbs_site(write(tmp_path, "server.txt", """create queue workq
set queue workq resources_max.walltime = 24:00:00
set queue workq resources_max.mem = 4gb
set queue workq resources_default.walltime = 01:00:00
set queue workq started = False
set queue workq max_run_res.ncpus = [u:PBS_GENERIC=8]
set queue workq max_run_res.mem = [u:PBS_GENERIC=8gb]
set server resources_max.ncpus = 64
"""), sched_config=write(tmp_path, "sched_config", "help_starving_jobs: true ALL\nmax_starve: 12:00:00\n"
                                                      "fairshare_usage_res: mem\nbackfill_prime: false ALL\n"))
    assert pbs_unfollowed_keys(server) == [
        "queue workq max_run_res.mem (of resources only ncpus is followed)",
        "queue workq resources_max.mem (a job's walltime and ncpus are checked against the bounds, not its mem)",
        "queue workq resources_default.walltime (the log's Resource_List already has the default the server gave; "
        "a changed default changes no job here)",
        "queue workq started = False (its jobs run here)",
        "sched_config backfill_prime false (not followed)",
        "sched_config fairshare_usage_res mem (usage here is processor time: ncpus x walltime)"]
    quiet = read_pbs_site(write(tmp_path, "quiet.txt", "create queue workq\nset queue workq resources_max.walltime = 1:00:00\n"),
                          sched_config=write(tmp_path, "quiet_sched", "help_starving_jobs: false ALL\n"
                                                                      "fairshare_usage_res: cput\n"))
    assert pbs_unfollowed_keys(quiet) == []
    # help_starving_jobs is followed (engine.policies.pbs): not listed, and the site's reading says what is understood
    assert not any("starving" in line for line in pbs_unfollowed_keys(server))
    assert ("starving jobs: help_starving_jobs true, max_starve 12:00:00 (43200 s): a job is starving when the time "
            "since its submission (eligible_time_enable not True) is over 43200 s; starving jobs go ahead of the other "
            "jobs of their class, longest starving first") in "\n".join(describe_pbs_site(server))
    assert "OpenPBS 22.05 and later ignore these lines (--set help_starving_jobs=false" in "\n".join(describe_pbs_site(server))
    assert "starving jobs: help_starving_jobs false: no job is starving" in describe_pbs_site(quiet)


QSTAT_QF = """Queue: workq
    queue_type = Execution
    total_jobs = 3
    state_count = Transit:0 Queued:2 Held:0 Waiting:0 Running:1 Exiting:0 Begun:0
    resources_max.walltime = 24:00:00
    max_run = [u:PBS_GENERIC=10],[u:alice=5],[u:bob=7],[u:carol=8],[u:dave=9],[u:f
\tred=2]
    resources_assigned.ncpus = 2
    hasnodes = True
    enabled = True

Queue: routeq
    queue_type = Route
    route_destinations = workq
    priority = high

Server: pbs01
    server_state = Active
    default_queue = routeq
    backfill_depth = 3
"""


def test_qstat_qf_output_reads_as_the_print_server(tmp_path):
    # qstat -Qf (and -Bf): "Queue: NAME" then its attributes; a value wrapped onto a tab line is
    # joined back; states (total_jobs, state_count, resources_assigned.*, hasnodes, server_state) skipped
    server = read_print_server(write(tmp_path, "qstat.txt", QSTAT_QF.replace("high", "10")))
    workq = server.queues["workq"]
    assert workq.max_walltime() == 86400 and workq.max_run.values[("u", "fred")] == 2
    assert len(workq.max_run.values) == 6 and server.queues["routeq"].route_destinations == ["workq"]
    assert server.default_queue == "routeq" and server.backfill_depth == 3
    assert not workq.unmodelled and not server.unmodelled
    # a bad value names the file's own line
    with pytest.raises(WorkloadError) as caught:
        read_print_server(write(tmp_path, "bad.txt", QSTAT_QF))
    assert "bad.txt, line 15: field priority: expected a whole number, got 'high'" in str(caught.value)


def test_print_server_text_translates_qstat_line_for_line():
    from engine.platform.pbsconf import print_server_text
    text = print_server_text(QSTAT_QF)
    assert len(text.splitlines()) == len(QSTAT_QF.splitlines())
    lines = text.splitlines()
    assert lines[0] == "create queue workq" and lines[1] == "set queue workq queue_type = Execution"
    assert lines[2] == "# total_jobs = 3" and lines[6] == ""
    assert lines[5].endswith("[u:fred=2]") and lines[16] == "# Server: pbs01" and lines[18] == "set server default_queue = routeq"
    assert print_server_text("create queue q\n") == "create queue q\n"      # a print server: unchanged
