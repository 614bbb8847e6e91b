"""The SFS paper's §9 scenario generator: who submits what and when, seeded runtimes, SWF round trip."""

from __future__ import annotations

import numpy as np
import pandas as pd

from engine.platform.allocations import parse_allocations
from engine.workload import load_workload
from engine.workload.scenarios import DAY, SFS_MACHINE_NODES, sfs_scenario


def test_alice_bob_and_chris_submit_what_the_paper_says():
    jobs = sfs_scenario(0).workload.jobs
    per_user = jobs.groupby("user").agg(jobs=("procs", "size"), procs=("procs", "max"), first=("submit", "min"),
                                        last=("submit", "max"))
    # Alice: 12 x 250 nodes on each of days 1-7 = 84 jobs; Bob: 6 x 65 x 7 = 42; Chris: one of 750 on day 7
    assert per_user.loc[1].tolist() == [84, 250, 0, 6 * DAY]
    assert per_user.loc[2].tolist() == [42, 65, 0, 6 * DAY]
    assert per_user.loc[3].tolist() == [1, 750, 6 * DAY, 6 * DAY]
    assert (jobs[jobs.user == 1].groupby("submit").size() == 12).all()
    assert sfs_scenario(0).workload.metadata["procs"] == SFS_MACHINE_NODES


def test_runtimes_are_70_to_95_percent_of_the_request_and_seeded():
    jobs = sfs_scenario(3).workload.jobs
    share = jobs.runtime / jobs.requested_time
    assert (jobs.requested_time == 24 * 3600).all()
    assert share.between(0.70, 0.95).all() and share.std() > 0.05
    pd.testing.assert_frame_equal(jobs, sfs_scenario(3).workload.jobs)
    assert not np.array_equal(jobs.runtime, sfs_scenario(4).workload.jobs.runtime)


def test_the_swf_text_reads_back_as_the_same_jobs(tmp_path):
    scenario = sfs_scenario(1)
    path = tmp_path / "sfs.swf"
    path.write_text(scenario.swf_text)
    read = load_workload(path).jobs
    columns = ["job_id", "submit", "runtime", "requested_time", "procs", "user", "group"]
    pd.testing.assert_frame_equal(read[columns], scenario.workload.jobs[columns])


def test_the_allocations_give_the_stated_targets():
    # award / (365 x 24) x 2: Alice 2,190,000 -> 500 nodes, Bob 1,752,000 -> 400, Chris 3,285,000 -> 750
    targets = parse_allocations(sfs_scenario().allocations_text).targets()
    assert targets == {"alice": 500.0, "bob": 400.0, "chris": 750.0}
