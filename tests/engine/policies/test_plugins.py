"""Python policy plugins: loading (file, module:Name, entry point, folder), their errors, the schedule
checks a misbehaving plugin meets, and the worked examples of docs/policies.md."""

from __future__ import annotations

import random
import textwrap
from pathlib import Path

import numpy as np
import pytest

from engine.api import read_trace, simulate
from engine.cli import main
from engine.policies import plugins, registry
from engine.policies.base import PolicyError
from engine.sim.simulator import SimulationError
from tests.engine import reference
from tests.engine.conftest import make_workload
from tests.plugin_registry import fresh_registry  # noqa: F401  (a fixture)
from tests.shared_data import SHARED_DATA

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "docs" / "examples"
KTH = SHARED_DATA / "swf" / "KTH-SP2-1996-2.1-cln.swf.gz"


pytestmark = pytest.mark.usefixtures("fresh_registry")


def write(folder: Path, name: str, source: str) -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return path


def random_jobs(seed: int, count: int = 60, capacity: int = 16) -> list[reference.Job]:
    """Jobs with ties in submit times, sizes and requests on purpose; runtimes within requests."""
    rng = random.Random(seed)
    jobs, t = [], 0
    for _ in range(count):
        t += rng.choice([0, 0, 1, 3, 10, 40])
        requested = rng.choice([1, 5, 10, 30, 60, 100])
        jobs.append(reference.Job(t, rng.randint(0, requested), requested, rng.randint(1, capacity)))
    return jobs


def workload_of(jobs: list[reference.Job]):
    return make_workload([(j.submit, j.runtime, j.requested, j.procs) for j in jobs])


def starts(jobs: list[reference.Job], capacity: int, policy: str) -> list[int]:
    return simulate(workload_of(jobs), capacity, policy).schedule["start"].tolist()


# -- loading --------------------------------------------------------------------------------------

def test_a_file_s_policies_join_the_catalog_in_a_family_of_their_own():
    names = plugins.load_file(EXAMPLES / "fcfs_policy.py")
    assert names == ["fcfs-plugin"]
    entry = next(e for e in registry.catalog() if e["name"] == "fcfs-plugin")
    assert entry["family"] == "plugins" and entry["family_title"] == registry.FAMILIES["plugins"]
    assert entry["description"].startswith("First come, first served (a plugin): jobs start in submit order")
    assert entry["plugin"] == str(EXAMPLES / "fcfs_policy.py")
    assert (entry["ordering"], entry["algorithm"]) == ("fcfs", "fcfs-plugin")
    assert registry.resolve("fcfs-plugin").algorithm == "fcfs-plugin"


def test_a_run_records_the_plugin_s_code_and_its_command_loads_it():
    import hashlib

    from engine.api import simulate_command
    path = EXAMPLES / "fcfs_policy.py"
    plugins.load_file(path)
    meta = simulate(workload_of(random_jobs(1)), 16, "fcfs-plugin").meta
    assert meta["plugins"] == [{"name": "fcfs-plugin", "origin": str(path), "file": str(path.resolve()),
                                "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}]
    assert "plugins" not in simulate(workload_of(random_jobs(1)), 16, "fcfs").meta
    command = simulate_command("t.swf", meta["policy"], policy_files=["fcfs_policy.py"])
    assert " --policy-file fcfs_policy.py --policy " in command


def test_loading_the_same_file_again_replaces_its_policies():
    assert plugins.load_file(EXAMPLES / "fcfs_policy.py") == plugins.load_file(EXAMPLES / "fcfs_policy.py")


def test_a_file_with_several_policies_or_a_policies_list(tmp_path):
    path = write(tmp_path, "two.py", '''
        from engine.api import Algorithm, Ordering, Param

        class Helper:
            pass

        class _Private(Algorithm):
            pass

        class Smallest(Ordering):
            """Smallest first."""
            parameters = (Param("scale", "float", 1.0, "a factor"),)
            def key(self, job):
                return self.sim.size[job] * self.params["scale"]

        class Nothing(Algorithm):
            """Never mind."""
            name = "nothing-much"
            def schedule(self):
                pass
    ''')
    assert plugins.load_file(path) == ["smallest", "nothing-much"]
    smallest = registry.resolve({"preset": "smallest", "params": {"scale": "2"}})
    assert (smallest.ordering, smallest.algorithm, smallest.params["scale"]) == ("smallest", "easy", 2.0)
    listed = write(tmp_path, "listed.py", '''
        from engine.api import Ordering

        class A(Ordering):
            """A."""
            def key(self, job):
                return job

        class B(A):
            """B."""

        POLICIES = [B]
    ''')
    assert plugins.load_file(listed) == ["b"]


def test_a_module_class_on_the_python_path(tmp_path, monkeypatch):
    write(tmp_path, "my_policies.py", '''
        from engine.api import Ordering

        class LongestFirst(Ordering):
            """Longest requested time first."""
            name = "longest"
            algorithm = "none"
            def key(self, job):
                return -self.sim.estimate[job]
    ''')
    monkeypatch.syspath_prepend(str(tmp_path))
    assert plugins.load_module("my_policies:LongestFirst") == ["longest"]
    jobs = [reference.Job(0, 5, 5, 4), reference.Job(1, 9, 9, 4), reference.Job(1, 30, 30, 4), reference.Job(1, 1, 1, 4)]
    # 4 processors: job 1 first; at t=5 the longest request of those waiting: job 3 (30 s), then job 2, job 4
    assert starts(jobs, 4, "longest") == [0, 35, 5, 44]


def test_an_installed_distribution_s_entry_point(tmp_path, monkeypatch):
    """A real (if tiny) installed distribution: its dist-info lists a class and a module."""
    write(tmp_path, "area_policies.py", '''
        from engine.api import Ordering

        class LargestArea(Ordering):
            """Largest area (requested time x processors) first."""
            name = "largest-area-plugin"
            def key(self, job):
                return -self.sim.estimate[job] * self.sim.procs[job]
    ''')
    info = tmp_path / "area_policies-1.2.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: area-policies\nVersion: 1.2\n")
    (info / "entry_points.txt").write_text(f"[{plugins.ENTRY_POINT_GROUP}]\narea = area_policies:LargestArea\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    loaded = plugins.load_plugins(entry_points=True)
    assert loaded.problems == [] and loaded.names == ["largest-area-plugin"]
    entry = next(e for e in registry.catalog() if e["name"] == "largest-area-plugin")
    assert entry["plugin"] == "entry point area = area_policies:LargestArea (area-policies 1.2)"


def test_a_folder_of_files_loads_what_it_can_and_names_what_it_cannot(tmp_path):
    write(tmp_path, "good.py", '''
        from engine.api import Ordering

        class Good(Ordering):
            """Good."""
            def key(self, job):
                return job
    ''')
    write(tmp_path, "broken.py", "from engine.api import Ordering\n\nclass Broken(Ordering:\n    pass\n")
    write(tmp_path, "_helper.py", "raise RuntimeError('not a plugin: never imported')\n")
    (tmp_path / "notes.txt").write_text("not python")
    loaded = plugins.load_plugins(directory=tmp_path)
    assert loaded.names == ["good"]
    assert len(loaded.problems) == 1 and loaded.problems[0].startswith(f"{tmp_path / 'broken.py'}, line 3: SyntaxError: ")
    assert plugins.load_plugins(directory=tmp_path / "missing").problems == [
        f"{tmp_path / 'missing'}: the policy plugin folder does not exist"]


# -- errors while loading: one line naming the file and the problem --------------------------------

@pytest.mark.parametrize(("source", "expected"), [
    ("import no_such_module_here\n", ", line 1: ModuleNotFoundError: No module named 'no_such_module_here'"),
    ("x = 1\n\ny = 1 / 0\n", ", line 3: ZeroDivisionError: division by zero"),
    ("def f(:\n    pass\n", ", line 1: SyntaxError: "),
    ("x = 1\n", ": defines no policy (a class deriving from Algorithm or Ordering, imported from engine.api)"),
    ("from engine.api import Algorithm\nclass Easy(Algorithm):\n    '''Mine.'''\n    name = 'easy'\n",
     ": policy name 'easy' is taken by a built-in policy; give the class another name attribute"),
    ("from engine.api import Algorithm\nclass Bad(Algorithm):\n    name = 'Bad Name!'\n",
     ": policy name 'Bad Name!': use 1-64 lower-case letters, digits, - and _"),
    ("from engine.api import Algorithm\nclass A(Algorithm):\n    ordering = 'nope'\n",
     ": A.ordering: unknown ordering 'nope' (orderings: "),
    ("from engine.api import Ordering\nclass O(Ordering):\n    algorithm = 'nope'\n",
     ": O.algorithm: unknown algorithm 'nope' (algorithms: "),
    ("from engine.api import Algorithm\nclass A(Algorithm):\n    parameters = ('masc',)\n",
     ": A.parameters holds 'masc', not a Param"),
    ("from engine.api import Algorithm, Param\nclass A(Algorithm):\n"
     "    parameters = (Param('deadline_fraction', 'float', 0.0, 'mine'),)\n",
     ": parameter 'deadline_fraction' is taken by its ordering or a workload option"),
])
def test_a_file_that_cannot_be_loaded_is_one_line(tmp_path, source, expected):
    path = write(tmp_path, "plugin.py", source)
    with pytest.raises(PolicyError) as error:
        plugins.load_file(path)
    line = str(error.value)
    assert line.startswith(str(path)) and expected in line and "\n" not in line


def test_module_references_that_cannot_be_loaded(tmp_path, monkeypatch):
    write(tmp_path, "some_policies.py", "from engine.api import Algorithm\n\nclass Mine(Algorithm):\n    '''M.'''\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(PolicyError, match=r"^policy some_policies:Other: module some_policies has no Other "
                                          r"\(its policies: Mine\)$"):
        plugins.load_module("some_policies:Other")
    with pytest.raises(PolicyError, match=r"^policy nowhere_at_all:X: .*ModuleNotFoundError: No module named "
                                          r"'nowhere_at_all'$"):
        plugins.load_module("nowhere_at_all:X")
    with pytest.raises(PolicyError, match="no such policy file"):
        plugins.load_file(tmp_path / "absent.py")


def test_two_plugins_may_not_share_a_name(tmp_path):
    source = "from engine.api import Algorithm\nclass A(Algorithm):\n    '''A.'''\n    name = 'same'\n"
    plugins.load_file(write(tmp_path, "one.py", source))
    with pytest.raises(PolicyError, match=r"two.py: policy name 'same' is taken by the plugin .*one.py"):
        plugins.load_file(write(tmp_path, "two.py", source))


def test_the_command_line_says_one_line_and_exits_2(tmp_path, capsys):
    path = write(tmp_path, "plugin.py", "import nothing_of_that_name\n")
    trace = tmp_path / "t.swf"
    trace.write_text("1 0 -1 10 2 -1 -1 2 10 -1 1 1 1 -1 1 -1 -1 -1\n")
    assert main(["simulate", str(trace), "--procs", "4", "--policy-file", str(path), "--out",
                 str(tmp_path / "s.csv")]) == 2
    err = capsys.readouterr().err
    assert err == f"error: {path}, line 1: ModuleNotFoundError: No module named 'nothing_of_that_name'\n"


# -- the command line ----------------------------------------------------------------------------

def test_simulate_and_list_from_the_command_line(tmp_path, capsys, monkeypatch):
    trace = tmp_path / "t.swf"
    trace.write_text("".join(f"{i + 1} {s} -1 {r} {p} -1 -1 {p} {r} -1 1 1 1 -1 1 -1 -1 -1\n"
                             for i, (s, r, p) in enumerate([(0, 10, 3), (1, 5, 2), (2, 5, 1)])))
    out = tmp_path / "s.csv"
    assert main(["simulate", str(trace), "--procs", "4", "--policy-file", str(EXAMPLES / "fcfs_policy.py"),
                 "--out", str(out)]) == 0
    assert [int(line.split(",")[3]) for line in out.read_text().splitlines()[1:]] == [0, 10, 10]
    assert main(["policies"]) == 0 and "fcfs-plugin" in capsys.readouterr().out   # loaded in this process
    assert main(["policies", "--policy-file", str(EXAMPLES / "easy_policy.py")]) == 0
    listing = capsys.readouterr().out
    assert "easy-plugin      EASY backfilling (a plugin)" in listing
    assert f"family: {registry.FAMILIES['plugins']}; from: {EXAMPLES / 'easy_policy.py'}" in listing
    # two policies given: --policy must choose; module:Name as --policy
    assert main(["simulate", str(trace), "--procs", "4", "--policy-file", str(EXAMPLES / "fcfs_policy.py"),
                 "--policy-file", str(EXAMPLES / "easy_policy.py"), "--out", str(out)]) == 2
    assert "--policy is required: the policy files define several policies (fcfs-plugin, easy-plugin)" in (
        capsys.readouterr().err)
    monkeypatch.syspath_prepend(str(EXAMPLES))
    assert main(["simulate", str(trace), "--procs", "4", "--policy", "wfp3_ordering:Wfp3", "--out", str(out)]) == 0


# -- what a plugin may not do: the run fails with one line naming the job --------------------------

BROKEN = {
    "over-commits": ('''
        def schedule(self):
            while len(self.queue):
                self.start(self.queue.head())      # never asks whether it fits
    ''', "schedule check failed: capacity: job 2 started at t=5 on 3 processors with 1 free of 4 (it does not fit now)"),
    "starts before submission": ('''
        def on_submit(self, job):
            super().on_submit(job)
            if job + 1 < self.sim.n:
                self.sim.start(job + 1)            # the next job, not yet submitted
        def schedule(self):
            pass
    ''', "schedule check failed: submit: job 2 started at t=0, before its submission at t=5"),
    "starts twice": ('''
        def schedule(self):
            while len(self.queue) and self.sim.fits(self.queue.head()):
                job = self.queue.head()
                self.start(job)
                self.sim.start(job)                # again
    ''', "schedule check failed: jobs: job 1 started twice (at t=0 and again at t=0)"),
    "never starts a job": ('''
        def schedule(self):
            for job in self.queue.jobs():
                if self.sim.job_name(job) != "job 3" and self.sim.fits(job):
                    self.start(job)
    ''', "schedule check failed: jobs: job 3 never started: it waits with the machine idle at t=20 and nothing "
         "left to happen (submitted at t=6, 2 of 4 processors): the policy never starts it"),
    "starts a job it did not queue": ('''
        def on_submit(self, job):
            if job != 1:
                super().on_submit(job)             # keeps job 2 aside, then starts it as if queued
        def schedule(self):
            if self.sim.start_time[1] < 0 and self.sim.now >= 5 and self.sim.fits(1):
                self.start(1)
            while len(self.queue) and self.sim.fits(self.queue.head()):
                self.start(self.queue.head())
    ''', "job 2 is not in the waiting queue: an algorithm that keeps its own list of waiting jobs starts them "
         "with sim.start(job)"),
    "raises": ('''
        def schedule(self):
            if self.sim.now > 0:
                {}["oops"]
            while len(self.queue) and self.sim.fits(self.queue.head()):
                self.start(self.queue.head())
    ''', "line 8, in schedule: KeyError: 'oops'"),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_a_misbehaving_plugin_fails_its_run_naming_the_job(tmp_path, case, capsys):
    body, expected = BROKEN[case]
    path = write(tmp_path, "broken.py", "from engine.api import Algorithm\n\nclass Broken(Algorithm):\n"
                 "    '''Broken on purpose.'''\n" + textwrap.indent(textwrap.dedent(body), "    "))
    plugins.load_file(path)
    workload = make_workload([(0, 10, 10, 3), (5, 10, 10, 3), (6, 4, 4, 2)])
    with pytest.raises(SimulationError) as error:
        simulate(workload, 4, "broken")
    assert expected in str(error.value) and "\n" not in str(error.value)
    if case == "raises":
        assert str(error.value) == f"policy plugin {path}, line 8, in schedule: KeyError: 'oops'"
    swf = tmp_path / "t.swf"
    swf.write_text("".join(f"{i + 1} {s} -1 {r} {p} -1 -1 {p} {r} -1 1 1 1 -1 1 -1 -1 -1\n"
                           for i, (s, r, p) in enumerate([(0, 10, 3), (5, 10, 3), (6, 4, 2)])))
    assert main(["simulate", str(swf), "--procs", "4", "--policy-file", str(path), "--out",
                 str(tmp_path / "s.csv")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and expected in err and err.count("\n") == 1 and "Traceback" not in err


# -- the interface: orderings by key, by comparison, by state; reservations ------------------------

def test_an_ordering_by_job_data_is_made_once_and_indexed(tmp_path):
    """A key over the jobs' data gives the queue a rank per job, as the built-in orderings do (the
    compiled loops and EASY's index run it); a comparison gives the same order."""
    path = write(tmp_path, "orders.py", '''
        import functools
        from engine.api import Ordering

        class ByKey(Ordering):
            """Fewest processors, then shortest request."""
            def key(self, job):
                return (self.sim.procs[job], self.sim.estimate[job])

        class ByComparison(Ordering):
            """The same order, said as a comparison."""
            def compare(self, a, b):
                sim = self.sim
                return (sim.procs[a] - sim.procs[b]) or (sim.estimate[a] - sim.estimate[b])
    ''')
    plugins.load_file(path)
    jobs = random_jobs(3, count=80)
    from engine.sim.simulator import Simulation
    sim = Simulation(workload_of(jobs), 16)
    queue = registry.ORDERINGS["bykey"].factory(sim, {})
    expected = sorted(range(len(jobs)), key=lambda j: (jobs[j].procs, max(jobs[j].requested, 1), j))
    assert queue.rank is not None and np.argsort(queue.rank).tolist() == expected
    assert registry.ORDERINGS["bycomparison"].factory(sim, {}).rank.tolist() == queue.rank.tolist()
    assert starts(jobs, 16, "bykey") == starts(jobs, 16, "bycomparison")


def test_an_ordering_by_state_is_put_in_order_at_every_instant():
    """WFP3 (docs/examples/wfp3_ordering.py) with EASY equals the naive EASY whose waiting list is
    sorted by (-(wait / request)^3 x processors, arrival) at every decision."""
    plugins.load_file(EXAMPLES / "wfp3_ordering.py")

    def wfp3(jobs: list[reference.Job]) -> reference.Key:
        def key(j: int, now: int) -> tuple[float, int]:
            return -(((now - jobs[j].submit) / max(jobs[j].requested, 1)) ** 3 * jobs[j].procs), j
        return key
    for seed in range(6):
        jobs = random_jobs(seed)
        assert starts(jobs, 16, "wfp3-plugin") == reference.easy(jobs, 16, key=wfp3(jobs)), seed


def test_the_wfp3_example_is_the_wfp3_formula_preset_job_by_job():
    """The Python ordering and the formula preset (engine/policies/formula.py) agree on a month of KTH-SP2."""
    plugins.load_file(EXAMPLES / "wfp3_ordering.py")
    plugin = kth_starts("wfp3-plugin", (30, 60))
    assert len(plugin) > 1000 and plugin == kth_starts("wfp3-easy", (30, 60))
    for seed in range(4):
        jobs = random_jobs(seed)
        assert starts(jobs, 16, "wfp3-plugin") == starts(jobs, 16, "wfp3-easy"), seed


def test_an_algorithm_may_keep_reservations_in_the_availability_profile(tmp_path):
    """EASY said with the availability profile: the head's reservation is a step of the profile,
    and a job may start when the profile holds its processors from now for its request."""
    path = write(tmp_path, "profile_easy.py", '''
        from engine.api import Algorithm, running_jobs_profile

        class ProfileEasy(Algorithm):
            """EASY with a reservation in the availability profile."""
            def schedule(self):
                sim, queue = self.sim, self.queue
                while len(queue) and sim.fits(queue.head()):
                    self.start(queue.head())
                if not len(queue):
                    return
                profile = running_jobs_profile(sim)
                head = queue.head()
                at = profile.earliest_start(sim.now, sim.estimate[head], sim.size[head])
                profile.reserve(at, at + sim.estimate[head], sim.size[head])
                for job in queue.jobs()[1:]:
                    need, end = sim.size[job], sim.now + sim.estimate[job]
                    if profile.earliest_start(sim.now, sim.estimate[job], need, before=sim.now + 1) == sim.now:
                        self.start(job)
                        profile.reserve(sim.now, end, need)
    ''')
    plugins.load_file(path)
    for seed in range(6):
        jobs = random_jobs(seed)
        assert starts(jobs, 16, "profileeasy") == reference.easy(jobs, 16), seed


def test_a_plugin_runs_on_clusters_of_nodes_where_the_node_allocator_answers_fits():
    """The EASY example on 600 jobs of MetaCentrum's wagap machine (node-level placement): every start
    is one the node allocator accepted, and the schedule passes the node-level checks."""
    from engine.platform.machines import read_machines
    from engine.workload.model import Workload
    alea = SHARED_DATA / "metacentrum" / "alea"
    workload = read_trace(alea / "wagap-2013.swf")
    workload = Workload(workload.jobs.iloc[:600].reset_index(drop=True), workload.metadata, workload.report,
                        workload.source)
    plugins.load_file(EXAMPLES / "easy_policy.py")
    result = simulate(workload, None, "easy-plugin", machine=read_machines(alea / "wagap-2013.swf.machines"))
    checked = result.meta["summary"]["validation"]
    assert checked["ok"] and checked["checks"]["capacity"] == "ok" and checked["checks"]["submit"] == "ok"
    assert (result.schedule["start"] >= result.schedule["submit"]).all() and len(result.schedule) > 500


# -- the worked examples of docs/policies.md ---------------------------------------------------------

def test_the_fcfs_example_is_fcfs():
    plugins.load_file(EXAMPLES / "fcfs_policy.py")
    for seed in range(4):
        jobs = random_jobs(seed)
        assert starts(jobs, 16, "fcfs-plugin") == reference.fcfs(jobs, 16)


def test_the_easy_example_is_easy_on_hand_worked_jobs():
    plugins.load_file(EXAMPLES / "easy_policy.py")
    for seed in range(6):
        jobs = random_jobs(seed)
        assert starts(jobs, 16, "easy-plugin") == reference.easy(jobs, 16), seed


def kth_starts(policy: str, days: tuple[float, float] | None) -> list[int]:
    from engine.workload.window import select_days
    workload = read_trace(KTH)
    if days is not None:
        workload = select_days(workload, *days)
    return simulate(workload, int(workload.metadata["procs"]), policy).schedule["start"].tolist()


def test_the_easy_example_gives_the_built_in_easy_schedule_on_a_month_of_kth():
    plugins.load_file(EXAMPLES / "easy_policy.py")
    plugin = kth_starts("easy-plugin", (30, 60))
    assert len(plugin) > 1000 and plugin == kth_starts("easy", (30, 60))


@pytest.mark.slow
def test_the_easy_example_gives_the_built_in_easy_schedule_on_the_whole_of_kth():
    plugins.load_file(EXAMPLES / "easy_policy.py")
    plugin = kth_starts("easy-plugin", None)
    assert len(plugin) > 28_000 and plugin == kth_starts("easy", None)


def test_every_example_is_short_and_documented():
    docs = (ROOT / "docs" / "policies.md").read_text(encoding="utf-8")
    for name, most in (("fcfs_policy.py", 25), ("easy_policy.py", 50), ("wfp3_ordering.py", 30)):
        assert len((EXAMPLES / name).read_text().splitlines()) <= most
        assert f"--policy-file docs/examples/{name}" in docs
