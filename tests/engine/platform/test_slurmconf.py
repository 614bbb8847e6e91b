"""A Slurm site's own files: slurm.conf and the sacctmgr dumps, read as slurm.conf(5) and sacctmgr(1) write them."""

from __future__ import annotations

import pytest

from engine.cli import main
from engine.platform.slurmconf import (describe_site, parse_slurm_conf, next_usage_reset, read_associations, read_qos,
                                       read_slurm_site, shown_time, slurm_time, tres_counts, unfollowed_keys,
                                       unmodelled_keys)
from engine.workload.errors import WorkloadError

SITE_CONF = """\
# a small site
ClusterName=hpc
SlurmctldHost=head
NodeName=DEFAULT CPUs=32 RealMemory=128000
NodeName=cn[001-004] Features=ib
NodeName=gpu[1-2] CPUs=64 RealMemory=512000 Gres=gpu:a100:4 Features=ib,gpu
PartitionName=DEFAULT State=UP MaxTime=1-00:00:00
PartitionName=normal Nodes=cn[001-004] Default=YES DefaultTime=60 PriorityJobFactor=10
PartitionName=long Nodes=cn[003-004] MaxTime=7-00:00:00 MaxNodes=2 PriorityTier=2 AllowQOS=long,normal
PartitionName=gpu Nodes=gpu[1-2] Priority=5 QOS=gpuqos MaxTime=UNLIMITED
PriorityType=priority/multifactor
PriorityWeightAge=1000
PriorityWeightFairshare=100000
PriorityWeightJobSize=500
PriorityWeightPartition=10000
PriorityWeightQOS=2000
PriorityWeightTRES=CPU=1000,Mem=2000,GRES/gpu=3000
PriorityDecayHalfLife=14-0
PriorityMaxAge=7-0
PriorityCalcPeriod=5
PriorityFavorSmall=YES
PriorityFlags=NO_FAIR_TREE,SMALL_RELATIVE_TO_TIME
SchedulerType=sched/backfill
SchedulerParameters=bf_interval=60,bf_max_job_test=1000,bf_continue,bf_window=2880,default_queue_depth=200,bf_yield_sleep=1
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
"""


@pytest.mark.parametrize(("text", "seconds"), [
    ("30", 1800), ("30:15", 1815), ("1:30:00", 5400), ("2-12", 2 * 86400 + 12 * 3600),
    ("2-12:30", 2 * 86400 + 12 * 3600 + 1800), ("2-00:00:05", 2 * 86400 + 5), ("UNLIMITED", None),
    ("infinite", None), ("0", 0),
])
def test_times_read_as_slurm_writes_them(text, seconds):
    assert slurm_time(text) == seconds


@pytest.mark.parametrize("text", ["", "1h", "1:2:3:4", "-5", "2-", "1.5"])
def test_a_time_slurm_would_not_write_is_refused(text):
    with pytest.raises(ValueError, match="expected a time"):
        slurm_time(text)


def test_shown_time_is_the_inverse_for_whole_seconds():
    for seconds in (0, 59, 3600, 86399, 86400, 7 * 86400 + 5):
        assert slurm_time(shown_time(seconds)) == seconds
    assert shown_time(None) == "UNLIMITED"


def test_nodes_with_defaults_ranges_and_gres():
    conf = parse_slurm_conf(SITE_CONF, "site.conf")
    cn, gpu = conf.nodes
    assert cn.names == ["cn001", "cn002", "cn003", "cn004"] and (cn.cpus, cn.real_memory_mb) == (32, 128000)
    assert gpu.names == ["gpu1", "gpu2"] and (gpu.cpus, gpu.gres, gpu.features) == (64, {"gpu": 4}, ["ib", "gpu"])
    assert conf.total_cpus == 4 * 32 + 2 * 64 and conf.cluster == "hpc"


def test_partitions_with_default_lines_and_both_priority_spellings():
    parts = parse_slurm_conf(SITE_CONF, "site.conf").partitions
    normal, long, gpu = parts["normal"], parts["long"], parts["gpu"]
    assert normal.default and normal.max_time == 86400 and normal.default_time == 3600
    assert normal.priority_job_factor == 10 and normal.priority_tier == 1
    assert long.nodes == ["cn003", "cn004"] and long.max_time == 7 * 86400 and long.max_nodes == 2
    assert long.priority_tier == 2 and long.allow_qos == ["long", "normal"]
    assert long.default_time == long.max_time           # DefaultTime defaults to MaxTime
    assert gpu.max_time is None and gpu.qos == "gpuqos"
    assert gpu.priority_job_factor == gpu.priority_tier == 5


def test_priority_and_scheduler_settings():
    conf = parse_slurm_conf(SITE_CONF, "site.conf")
    assert conf.weights == {"age": 1000, "fairshare": 100000, "jobsize": 500, "partition": 10000, "qos": 2000}
    assert conf.tres_weights == {"cpu": 1000.0, "mem": 2000.0, "gres/gpu": 3000.0}
    assert (conf.decay_half_life, conf.max_age, conf.calc_period) == (14 * 86400, 7 * 86400, 300)
    assert conf.favor_small and not conf.fair_tree
    assert conf.scheduler["bf_interval"] == 60 and conf.scheduler["bf_max_job_test"] == 1000
    assert conf.scheduler["bf_continue"] is True and conf.scheduler["bf_window"] == 2880
    assert conf.scheduler["sched_interval"] == 60            # Slurm's default, not set here
    assert conf.scheduler_unknown == {"bf_yield_sleep": "1"}
    assert conf.memory_consumable


def test_every_key_it_does_not_model_is_listed_with_its_line():
    conf = parse_slurm_conf(SITE_CONF, "site.conf")
    assert conf.unmodelled == {"SlurmctldHost": (3, "head")}
    text = "\n".join(describe_site(read_slurm_site_from_text(SITE_CONF)))
    assert "not modelled (read, not used): SlurmctldHost (line 3), SchedulerParameters bf_yield_sleep" in text


def test_keys_of_node_and_partition_lines_it_does_not_model_are_listed_with_their_line():
    text = SITE_CONF + ("NodeName=big1 CPUs=96 Weight=10 NodeAddr=10.0.0.9 State=UNKNOWN CoreSpecCount=2\n"
                        "PartitionName=DEFAULT PreemptMode=OFF GraceTime=0\n"
                        "PartitionName=scav Nodes=ALL PreemptMode=REQUEUE OverSubscribe=NO Hidden=YES "
                        "TRESBillingWeights=CPU=1.0\n")
    conf = parse_slurm_conf(text, "site.conf")
    unmodelled = {key: line for key, (line, _) in conf.unmodelled.items()}
    # a value that is Slurm's default, or a key no schedule depends on, is not listed
    assert unmodelled == {"SlurmctldHost": 3, "NodeName=big1 Weight": 27, "NodeName=big1 CoreSpecCount": 27,
                          "PartitionName=scav PreemptMode": 29, "PartitionName=scav TRESBillingWeights": 29}
    assert conf.nodes[-1].cpus == 96
    shown = "\n".join(describe_site(read_slurm_site_from_text(text)))
    assert "PartitionName=scav PreemptMode (line 29)" in shown


def test_cpus_from_boards_sockets_cores_and_threads_when_cpus_is_not_given():
    conf = parse_slurm_conf("NodeName=a1 Boards=2 SocketsPerBoard=2 CoresPerSocket=8 ThreadsPerCore=2\n"
                            "NodeName=b1 Sockets=2 CoresPerSocket=16\nNodeName=c1 Procs=12\nPartitionName=p Nodes=ALL\n")
    assert [n.cpus for n in conf.nodes] == [64, 32, 12]


@pytest.mark.parametrize(("value", "read"), [("YES", "ANY"), ("any", "ANY"), ("ALL", "ALL"), ("NO", "NO"), ("0", "NO")])
def test_enforce_part_limits_read_as_read_config_does(value, read):
    conf = parse_slurm_conf(f"NodeName=n1\nPartitionName=p\nEnforcePartLimits={value}\n", "site.conf")
    assert conf.enforce_part_limits == read
    assert "EnforcePartLimits" not in conf.unmodelled


def test_partition_access_lists_are_read_and_shown():
    conf_text = ("NodeName=n1\nPartitionName=p AllowAccounts=phys,chem DenyQOS=bulk MinNodes=2 AllowGroups=hpc\n"
                 "EnforcePartLimits=ALL\n")
    conf = parse_slurm_conf(conf_text, "site.conf")
    p = conf.partitions["p"]
    assert (p.allow_accounts, p.deny_accounts, p.allow_qos, p.deny_qos, p.min_nodes, p.allow_groups) == \
        (["phys", "chem"], [], ["ALL"], ["bulk"], 2, ["hpc"])
    shown = "\n".join(describe_site(read_slurm_site_from_text(conf_text)))
    assert "MinNodes 2, DenyQOS bulk, AllowAccounts phys,chem, AllowGroups hpc" in shown
    assert "(EnforcePartLimits ALL): sbatch refuses" in shown
    assert "PartitionName=p AllowGroups=hpc (line 2; not followed" in shown


def read_slurm_site_from_text(text):  # noqa: ANN001, ANN201
    from engine.platform.slurmconf import SlurmSite
    return SlurmSite(parse_slurm_conf(text, "site.conf"))


@pytest.mark.parametrize(("text", "where"), [
    ("NodeName=n[1-2] CPUs=many\nPartitionName=p Nodes=ALL\n", "site.conf, line 1: field CPUs: expected a whole number"),
    ("NodeName=n1\nPartitionName=p Nodes=n[1-2]\n", "site.conf, line 2: field Nodes: partition p: node n2 has no NodeName"),
    ("NodeName=n1\nPartitionName=p Nodes=ALL MaxTime=1h\n", "site.conf, line 2: field MaxTime: expected a time"),
    ("NodeName=n1\nNodeName=n[0-1]\nPartitionName=p\n", "site.conf, line 2: field NodeName: node n1 defined again"),
    ("NodeName=n1\n", "site.conf: no PartitionName line"),
    ("PartitionName=p\n", "site.conf: no NodeName line"),
    ("NodeName=n1 Gres=gpu:x\nPartitionName=p\n", "site.conf, line 1: field Gres: expected NAME[:TYPE]:COUNT"),
    ("NodeName=n1\nPartitionName=p\nPriorityWeightAge=lots\n", "site.conf, line 3: field PriorityWeightAge"),
    ("NodeName=n1\nPartitionName=p\nInclude other.conf\n", "site.conf, line 3: field Include"),
    ("NodeName=n1 stray\nPartitionName=p\n", "site.conf, line 1: expected KEY=VALUE"),
    ("NodeName=n1\nPartitionName=p State=ASLEEP\n", "site.conf, line 2: field State: expected one of UP, DOWN"),
    ("NodeName=n1\nPartitionName=p\nEnforcePartLimits=maybe\n", "site.conf, line 3: field EnforcePartLimits: expected NO"),
    ("NodeName=n1\nPartitionName=p MinNodes=two\n", "site.conf, line 2: field MinNodes: expected a whole number"),
])
def test_bad_lines_name_file_line_and_key(text, where):
    with pytest.raises(WorkloadError) as caught:
        parse_slurm_conf(text, "site.conf")
    assert str(caught.value).startswith(where)


QOS_DUMP = """\
Name|Priority|GraceTime|Flags|UsageFactor|GrpTRES|GrpJobs|MaxTRES|MaxWall|MaxTRESPU|MaxJobsPU|MaxSubmitPU
normal|0|00:00:00||1.000000||||||50|
long|10|00:00:00|DenyOnLimit|0.500000|cpu=256|||7-00:00:00|cpu=128,mem=200G|4|10
gpuqos|100|00:00:00||2.000000|gres/gpu=8||cpu=64||||
"""


def test_qos_limits_by_header_name(tmp_path):
    path = tmp_path / "qos.txt"
    path.write_text(QOS_DUMP)
    qos = read_qos(path)
    assert qos["normal"].max_jobs_per_user == 50 and qos["normal"].max_wall is None
    long = qos["long"]
    assert (long.priority, long.max_wall, long.max_jobs_per_user, long.max_submit_per_user) == (10, 7 * 86400, 4, 10)
    assert long.max_tres_per_user == {"cpu": 128, "mem": 200 * 1024} and long.grp_tres == {"cpu": 256}
    assert long.usage_factor == 0.5 and long.flags == ["DenyOnLimit"]
    assert qos["gpuqos"].max_tres_per_job == {"cpu": 64} and qos["gpuqos"].grp_tres == {"gres/gpu": 8}


def test_qos_and_association_columns_no_rule_follows_are_listed_not_dropped(tmp_path):
    # MaxJobsPA and MaxSubmitPA are read, and an association's Priority (PriorityWeightAssoc's); Preempt
    # is not modelled and says so, GrpTRESMins is read and followed, TRES other than cpu, mem, node and gres/gpu in a
    # limit (billing, a typed gres) are named as not followed;
    # the defaults sacctmgr prints (GraceTime 00:00:00, PreemptMode
    # cluster) are not listed
    qos = tmp_path / "qos.txt"
    qos.write_text("Name|GraceTime|Preempt|PreemptMode|GrpTRESMins|MaxTRESPU|MaxJobsPA|MaxSubmitPA\n"
                   "normal|00:00:00|scavenger|cluster|cpu=1000|cpu=8,mem=4G,gres/gpu=2,billing=9|3|10\n"
                   "scavenger|00:00:00||cluster||||\n")
    assoc = tmp_path / "assoc.txt"
    assoc.write_text("Account|User|Share|Priority|GrpTRES\nacct||1||mem=64G,gres/gpu:a100=4\nacct|u1|1|5|\n")
    conf = tmp_path / "slurm.conf"
    conf.write_text("NodeName=n1 CPUs=4\nPartitionName=p Nodes=n1\nSchedulerParameters=bf_continue\n")
    site = read_slurm_site(conf, qos=qos, assoc=assoc)
    normal = site.qos["normal"]
    assert (normal.max_jobs_per_account, normal.max_submit_per_account) == (3, 10)
    assert normal.unmodelled == {"Preempt": "scavenger"}
    assert normal.grp_tres_mins == {"cpu": 1000}       # read and followed
    assert site.qos["scavenger"].unmodelled == {}
    assert [a.unmodelled for a in site.associations] == [{}, {}]
    assert [a.priority for a in site.associations] == [None, 5]
    text = "\n".join(describe_site(site))
    assert "association acct/u1: shares 1, priority 5" in text and "Priority=5" not in text
    for listed in ("QOS normal Preempt=scavenger (qos line 2)",
                   "QOS normal MaxTRESPU billing=9", "association acct GrpTRES gres/gpu:a100=4",
                   "SchedulerParameters bf_continue (no effect"):
        assert listed in text
    for followed in ("MaxTRESPU cpu=8", "MaxTRESPU mem=4096", "MaxTRESPU gres/gpu=2 ", "GrpTRES mem=65536", "GrpTRESMins"):
        assert followed not in text.split("not modelled")[1]
    assert "max_jobs_per_account 3, max_submit_per_account 10" in text


def test_columns_in_another_order_and_parsable_with_a_trailing_bar(tmp_path):
    path = tmp_path / "qos.txt"
    path.write_text("MaxJobsPU|Name|\n7|normal|\n|debug|\n")
    qos = read_qos(path)
    assert qos["normal"].max_jobs_per_user == 7 and qos["debug"].max_jobs_per_user is None


ASSOC_DUMP = """\
Cluster|Account|User|Partition|Share|GrpJobs|GrpTRES|MaxJobs|MaxTRES|MaxSubmit|MaxWall|QOS|Def QOS
hpc|root||||||||||normal|
hpc|physics||||60|||||||normal|
hpc|physics|alice||1||||cpu=64|||normal,long|normal
hpc|chem|bob|long|parent||||||2-00:00:00|long|
"""


def test_associations_with_shares_limits_and_qos(tmp_path):
    path = tmp_path / "assoc.txt"
    path.write_text(ASSOC_DUMP.replace("hpc|physics||||60|||||||normal|", "hpc|physics|||60|||||||normal|"))
    root, physics, alice, bob = read_associations(path)
    assert (root.account, root.user, root.shares) == ("root", "", 1)
    assert physics.shares == 60 and physics.user == ""
    assert (alice.user, alice.max_tres_per_job, alice.qos, alice.default_qos) == ("alice", {"cpu": 64}, ["normal", "long"], "normal")
    assert (bob.partition, bob.shares, bob.max_wall) == ("long", -1, 2 * 86400)


def test_a_dump_with_a_row_of_the_wrong_width_names_its_line(tmp_path):
    path = tmp_path / "assoc.txt"
    path.write_text(ASSOC_DUMP)     # the physics row has one | too many
    with pytest.raises(WorkloadError, match=r"assoc.txt, line 3: 14 fields where the header has 13"):
        read_associations(path)


def test_a_dump_without_the_key_column_is_refused(tmp_path):
    path = tmp_path / "qos.txt"
    path.write_text("Priority|MaxWall\n1|10\n")
    with pytest.raises(WorkloadError, match="line 1: no Name column"):
        read_qos(path)


def test_tres_counts_in_megabytes():
    assert tres_counts("cpu=4,mem=2G,node=1,gres/gpu=2") == {"cpu": 4, "mem": 2048, "node": 1, "gres/gpu": 2}
    assert tres_counts("mem=1536K") == {"mem": 2}
    with pytest.raises(WorkloadError, match="expected NAME=COUNT"):
        tres_counts("cpu=four")


def test_a_partition_naming_a_qos_the_dump_lacks_is_refused(tmp_path):
    conf, qos = tmp_path / "slurm.conf", tmp_path / "qos.txt"
    conf.write_text(SITE_CONF)
    qos.write_text(QOS_DUMP.replace("gpuqos", "gpuq"))
    with pytest.raises(WorkloadError, match="slurm.conf, line 10: field QOS: partition gpu names QOS gpuqos"):
        read_slurm_site(conf, qos=qos)


def test_the_site_command_prints_what_it_understood(tmp_path, capsys):
    conf, qos, assoc = tmp_path / "slurm.conf", tmp_path / "qos.txt", tmp_path / "assoc.txt"
    conf.write_text(SITE_CONF)
    qos.write_text(QOS_DUMP)
    assoc.write_text(ASSOC_DUMP.replace("hpc|physics||||60|||||||normal|", "hpc|physics|||60|||||||normal|"))
    assert main(["site", str(conf), "--qos", str(qos), "--assoc", str(assoc)]) == 0
    out = capsys.readouterr().out
    assert "cluster hpc, 6 nodes, 256 CPUs" in out
    assert out.index("  long:") < out.index("  normal (default):")        # tier 2 first
    assert "QOS long: priority 10, max_wall 7-00:00:00, max_jobs_per_user 4" in out
    assert "association physics/alice: shares 1, max_tres_per_job cpu=64, QOS normal,long" in out
    assert "fair-share classic" in out and "memory is consumable" in out


def test_the_site_command_answers_bad_input_with_one_line(tmp_path, capsys):
    conf = tmp_path / "slurm.conf"
    conf.write_text("NodeName=n1 CPUs=x\n")
    assert main(["site", str(conf)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"error: {conf}, line 1: field CPUs")


def test_the_site_command_wants_one_kind_of_site(tmp_path, capsys):
    assert main(["site"]) == 2
    assert capsys.readouterr().err.startswith("error: python -m engine site: give either slurm.conf or --pbs-server")


REAL = __import__("pathlib").Path(__file__).parents[2] / "data" / "slurm_replay"


def test_the_real_slurm_sites_files_read_as_they_ran():
    site = read_slurm_site(REAL / "slurm.conf", qos=REAL / "qos.txt", assoc=REAL / "assoc.txt")
    conf = site.conf
    assert conf.total_cpus == 16 and set(conf.partitions) == {"short", "long"}
    assert (conf.partitions["short"].max_time, conf.partitions["long"].max_time) == (300, 1200)
    assert conf.weights["fairshare"] == 10000 and conf.fair_tree and not conf.memory_consumable
    assert conf.scheduler["bf_interval"] == 5 and conf.scheduler["sched_interval"] == 10
    assert site.qos["normal"].max_jobs_per_user == 4 and site.qos["bulk"].max_jobs_per_user == 2
    shares = {(a.account, a.user): a.shares for a in site.associations}
    assert shares[("physics", "")] == 60 and shares[("chemistry", "")] == 30 and shares[("teaching", "")] == 10
    assert "OverTimeLimit" not in conf.unmodelled and conf.over_time_limit == 0     # read (engine.sim.timelimit)
    assert conf.enforce == {"associations", "limits", "qos"} and conf.enforce_limits
    text = "\n".join(describe_site(site))
    assert "a job of a user without an association under its account is refused" in text and "safe:" not in text


def test_the_real_slurm_run_reads_whole():
    from engine.api import read_trace

    workload = read_trace(REAL / "sacct.txt", procs=16)
    assert len(workload) == 330 and workload.jobs["user"].nunique() == 5
    assert workload.report.total_rejected == 0


def test_grp_submit_tres_minutes_and_grp_wall_columns_are_read_by_their_titles(tmp_path):
    # sacctmgr 22.05's titles (QOS: MaxTRESMins; long forms too); GrpWall and GrpTRESMins (of a QOS
    # and an association, every TRES followed) and GrpTRESRunMins of mem and node are read and
    # followed; MaxTRESMins of a TRES not followed (billing) is named as not followed; UsageFactor is
    # followed, shown on its QOS's line where it is not 1
    qos = tmp_path / "qos.txt"
    qos.write_text("Name|GrpSubmit|MaxTRESMins|GrpTRESRunMins|GrpTRESMins|GrpWall|UsageFactor\n"
                   "normal|5|cpu=600,mem=100,billing=5|cpu=6000,mem=9|cpu=90000|2-00:00:00|0.5\n"
                   "low|||||2-00:00:00|1.000000\n")
    assoc = tmp_path / "assoc.txt"
    assoc.write_text("Account|User|Share|GrpSubmitJobs|MaxTRESMinsPerJob|GrpTRESRunMins|GrpWall|GrpTRESMins\n"
                     "acct||1|7|cpu=60|cpu=120|30|cpu=500,node=9\n")
    conf = tmp_path / "slurm.conf"
    conf.write_text("NodeName=n1 CPUs=4\nPartitionName=p Nodes=n1\n")
    site = read_slurm_site(conf, qos=qos, assoc=assoc)
    normal, acct = site.qos["normal"], site.associations[0]
    assert (normal.grp_submit, normal.max_tres_mins_per_job, normal.grp_tres_run_mins) == \
        (5, {"cpu": 600, "mem": 100, "billing": 5}, {"cpu": 6000, "mem": 9})
    assert (normal.grp_tres_mins, normal.grp_wall) == ({"cpu": 90000}, 2 * 86400)
    assert (acct.grp_submit, acct.max_tres_mins_per_job, acct.grp_tres_run_mins, acct.grp_wall) == \
        (7, {"cpu": 60}, {"cpu": 120}, 1800)
    text = "\n".join(describe_site(site))
    unfollowed = text.split("not modelled")[1]
    assert "QOS normal MaxTRESMins billing=5" in unfollowed and "UsageFactor" not in unfollowed
    normal_line, low_line = (line for line in text.splitlines() if line.startswith(("  QOS normal", "  QOS low")))
    assert normal_line.endswith(", usage factor 0.5") and "usage factor" not in low_line   # (1: Slurm's default)
    for followed in ("GrpSubmit", "MaxTRESMins cpu", "MaxTRESMins mem", "GrpTRESRunMins", "GrpTRESMins", "GrpWall"):
        assert followed not in unfollowed
    assert "grp_tres_mins cpu=90000, grp_wall 2-00:00:00" in text and "grp_wall 00:30:00" in text
    assert "grp_submit 5, max_tres_mins_per_job cpu=600,mem=100,billing=5, grp_tres_run_mins cpu=6000,mem=9" in text
    bad = tmp_path / "bad.txt"
    bad.write_text("Name|GrpTRESRunMins\nnormal|cpu=lots\n")
    with pytest.raises(WorkloadError) as error:
        read_qos(bad)
    assert "line 2" in str(error.value) and "GrpTRESRunMins" in str(error.value)


@pytest.mark.parametrize("value, flags", [
    ("", set()), ("associations", {"associations"}), ("limits", {"associations", "limits"}),
    ("qos,limits", {"associations", "limits", "qos"}), ("safe", {"associations", "limits", "safe"}),
    ("all", {"associations", "limits", "safe", "wckeys", "qos"}), ("2,nojobs", {"associations", "limits", "nojobs", "nosteps"}),
])
def test_accounting_storage_enforce_sets_the_flags_read_config_sets(value, flags):
    # read_config.c: limits and safe imply associations, safe implies limits, all is every flag but nojobs/nosteps
    text = "NodeName=n1 CPUs=4\nPartitionName=p Nodes=n1\n" + (f"AccountingStorageEnforce={value}\n" if value else "")
    conf = parse_slurm_conf(text, "t.conf")
    assert conf.enforce == flags and conf.enforce_limits == ("limits" in flags)
    assert "AccountingStorageEnforce" not in conf.unmodelled


def test_accounting_storage_enforce_in_the_site_description(tmp_path):
    qos = tmp_path / "qos.txt"
    qos.write_text("Name|MaxJobsPU|Flags\nnormal|2|OverPartQOS,DenyOnLimit,UsageFactorSafe\n")
    conf = tmp_path / "slurm.conf"
    conf.write_text("NodeName=n1 CPUs=4\nPartitionName=p Nodes=n1\nAccountingStorageEnforce=safe,qos\n")
    text = "\n".join(describe_site(read_slurm_site(conf, qos=qos)))
    assert "AccountingStorageEnforce associations,limits,qos,safe: association and QOS limits enforced" in text
    assert "safe: a job starts only if it can run to its time limit within GrpTRESMins and GrpWall" in text
    assert "without an association" not in text        # (no association dump: nothing to check against)
    unfollowed = text.split("not modelled")[1]
    for listed in ("AccountingStorageEnforce qos (not followed", "QOS normal Flags UsageFactorSafe (not followed"):
        assert listed in unfollowed
    for followed in ("associations", "safe"):       # (a user without a row refused; safe's stricter start)
        assert f"AccountingStorageEnforce {followed}" not in unfollowed
    assert "Flags OverPartQOS" not in unfollowed and "Flags DenyOnLimit" not in unfollowed
    assert "flags OverPartQOS,DenyOnLimit,UsageFactorSafe" in text
    conf.write_text("NodeName=n1 CPUs=4\nPartitionName=p Nodes=n1\n")
    assert "AccountingStorageEnforce not set: association and QOS limits NOT enforced" in \
        "\n".join(describe_site(read_slurm_site(conf, qos=qos)))
    conf.write_text("NodeName=n1 CPUs=4\nAccountingStorageEnforce=limits,strict\n")
    with pytest.raises(WorkloadError) as error:
        parse_slurm_conf(conf.read_text(), str(conf))
    assert "strict" in str(error.value) and "line 2" in str(error.value)


def test_max_tres_per_account_per_node_and_min_tres_are_read_and_followed(tmp_path):
    # sacctmgr's MaxTRESPA, MaxTRESPerNode and MinTRES (QOS; MaxTRESPerNode of an association too)
    # are read into the limits, listed with the QOS, not as unmodelled; a TRES the rules do not
    # follow in them (billing; node per node, which Slurm 22.05 gives no reason) is named as such
    qos = tmp_path / "qos.txt"
    qos.write_text("Name|MaxTRESPA|MaxTRESPerNode|MinTRES\nnormal|cpu=64,billing=9|cpu=4,node=1|cpu=2,mem=1G\n")
    assoc = tmp_path / "assoc.txt"
    assoc.write_text("Account|User|Share|MaxTRESPerNode\nacct||1|gres/gpu=2\n")
    conf = tmp_path / "slurm.conf"
    conf.write_text("NodeName=n1 CPUs=4\nPartitionName=p Nodes=n1\nAccountingStorageEnforce=limits\n")
    site = read_slurm_site(conf, qos=qos, assoc=assoc)
    normal, acct = site.qos["normal"], site.associations[0]
    assert (normal.max_tres_per_account, normal.max_tres_per_node, normal.min_tres_per_job) == (
        {"cpu": 64, "billing": 9}, {"cpu": 4, "node": 1}, {"cpu": 2, "mem": 1024})
    assert acct.max_tres_per_node == {"gres/gpu": 2} and normal.unmodelled == {} and acct.unmodelled == {}
    text = "\n".join(describe_site(site))
    unfollowed = text.split("not modelled")[1]
    assert "QOS normal MaxTRESPA billing=9" in unfollowed and "QOS normal MaxTRESPerNode node=1" in unfollowed
    for followed in ("MaxTRESPA cpu=64", "MaxTRESPerNode cpu=4", "MinTRES", "gres/gpu=2"):
        assert followed not in unfollowed
    assert "max_tres_per_account cpu=64,billing=9, max_tres_per_node cpu=4,node=1, min_tres_per_job cpu=2,mem=1024" in text


@pytest.mark.parametrize("value, listed, shown", [("MONTHLY", False, True), ("NONE", False, False), (None, False, False),
                                                 ("FORTNIGHTLY", True, False)])
def test_a_usage_reset_period_is_followed_and_a_word_slurm_lacks_named(tmp_path, value, listed, shown):
    # PriorityUsageResetPeriod's periods are followed (shown with the priority settings); a word
    # Slurm does not have is named as not followed with its line
    conf = tmp_path / "slurm.conf"
    conf.write_text("NodeName=n1 CPUs=4\nPartitionName=p Nodes=n1\n"
                    + (f"PriorityUsageResetPeriod={value}\n" if value else ""))
    text = "\n".join(describe_site(read_slurm_site(conf)))
    assert ("PriorityUsageResetPeriod FORTNIGHTLY (line 3; not followed" in text.split("not modelled")[1]) == listed
    assert ("usage reset MONTHLY (UTC, from the trace's dates)" in text) == shown


def test_usage_resets_fall_as_slurmctlds_next_reset_computes_them():
    # from Wednesday 2023-11-15 13:20 UTC: the next midnight, Sunday 11-19, 12-01, 2024-01-01 (the
    # next quarter), 2024-01-01; from 2023-12-31: 2024-01-01 for MONTHLY; NONE and NOW: none
    from datetime import UTC, datetime

    def at(*date: int) -> int:
        return int(datetime(*date, tzinfo=UTC).timestamp())

    last = at(2023, 11, 15, 13, 20)
    assert [next_usage_reset(p, last) for p in ("DAILY", "WEEKLY", "MONTHLY", "QUARTERLY", "YEARLY")] == [
        at(2023, 11, 16), at(2023, 11, 19), at(2023, 12, 1), at(2024, 1, 1), at(2024, 1, 1)]
    assert next_usage_reset("MONTHLY", at(2023, 12, 31, 23)) == at(2024, 1, 1)
    assert next_usage_reset("QUARTERLY", at(2023, 2, 1)) == at(2023, 4, 1)
    assert next_usage_reset("WEEKLY", at(2023, 11, 19)) == at(2023, 11, 26)      # a Sunday: the next one
    assert next_usage_reset("NONE", last) is None and next_usage_reset("NOW", last) is None


def test_scheduler_parameters_read_but_not_followed_are_listed_with_why_unless_at_their_default():
    text = ("NodeName=n1\nPartitionName=p\nSchedulerParameters=bf_max_job_part=50,bf_busy_nodes,max_sched_time=5,"
            "sched_min_interval=2,bf_yield_interval=2000000,bf_max_job_user=4\n")
    listed = [key for key in unfollowed_keys(read_slurm_site_from_text(text)) if key.startswith("SchedulerParameters")]
    # (bf_max_job_part and bf_max_job_user are followed)
    assert [key.split(" (")[0] for key in listed] == ["SchedulerParameters bf_busy_nodes=True",
                                                      "SchedulerParameters max_sched_time=5"]
    assert "only when" in listed[0]


def test_a_default_time_over_the_max_time_is_dropped_as_slurmctld_drops_it():
    conf = parse_slurm_conf("NodeName=n1\nPartitionName=DEFAULT DefaultTime=01:00:00\nPartitionName=debug MaxTime=30\n"
                            "PartitionName=open\n", "site.conf")
    assert conf.partitions["debug"].default_time == 30 * 60        # the job's limit is then MaxTime
    assert conf.partitions["open"].default_time == 3600


def test_scheduler_parameters_that_change_nothing_in_a_replay_say_why():
    text = "NodeName=n1\nPartitionName=p\nSchedulerParameters=defer,max_rpc_cnt=150,bf_window_linear=30\n"
    listed = unmodelled_keys(read_slurm_site_from_text(text))
    assert listed[0].startswith("SchedulerParameters defer (no effect here: the replay already runs the main scheduler")
    assert listed[1] == "SchedulerParameters max_rpc_cnt (no effect here: the controller's RPC load is not modelled)"
    assert listed[2] == "SchedulerParameters bf_window_linear"        # not modelled, no more said
