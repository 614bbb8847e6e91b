"""``python -m engine``: simulate a trace under a policy, list policies, inspect a trace.

A stable contract the web application and scripts rely on; see docs/engine-api.md. Bad input is
reported as one line on stderr with exit status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from typing import Any, NoReturn

import pandas as pd

from engine import api
from engine.api import Cleaning, Clusters, Pool, PolicyError, Scenario, Transforms, WorkloadError

USAGE_ERROR = 2


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "policy", "") is None and not getattr(args, "policy_file", None):
        args.usage.error("the following arguments are required: --policy (or --policy-file FILE.py)")
    try:
        return args.command(args)
    except (WorkloadError, PolicyError, api.SimulationError, api.Cancelled, OSError) as exc:
        print(f"error: {api.error_line(exc)}", file=sys.stderr)
        return USAGE_ERROR


class OneLineParser(argparse.ArgumentParser):
    """argparse whose usage errors (unknown flag, bad or missing value) are one line naming the flag,
    exit status 2, like every other bad input; `--help` still prints the usage. Subcommand parsers
    are of this class too (argparse makes them of the parent's class)."""

    def error(self, message: str) -> NoReturn:
        line = " ".join(message.split())
        if len(line) > 300:
            line = line[:297] + "..."
        self.exit(USAGE_ERROR, f"error: {self.prog}: {line} (see {self.prog} --help)\n")


#: the largest machine a size flag takes (as the readers' machine size: engine.workload.loading)
MAX_PROCESSORS = 2**31 - 1


def processor_count(text: str) -> int:
    """A size flag's value: a whole number from 1 to MAX_PROCESSORS (argparse reports a bad one in one line)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text[:40]!r}") from None
    if not 1 <= value <= MAX_PROCESSORS:
        raise argparse.ArgumentTypeError(f"expected a whole number from 1 to {MAX_PROCESSORS}, got {text[:40]}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="python -m engine", description="SchedLab's scheduling simulator.")
    commands = parser.add_subparsers(required=True, metavar="COMMAND")

    sim = commands.add_parser("simulate", help="simulate a trace under a policy")
    sim.add_argument("trace", help="an SWF trace, plain or gzip")
    sim.add_argument("--procs", type=int, help="machine size (default: the cores of --machines, else the header's "
                                               "MaxProcs, else MaxNodes)")
    sim.add_argument("--allocation", choices=("count", "buddy"), default="count")
    sim.add_argument("--allocations", metavar="FILE",
                     help="allocations CSV (allocation,members,award,period_days,target_factor,target) for "
                          "policies that use targets, e.g. sfs")
    sim.add_argument("--policy", help="a preset name (see `policies`), a JSON policy spec, or a Python plugin "
                                      "module:Class (docs/policies.md); may be left out when --policy-file "
                                      "defines one policy")
    sim.add_argument("--policy-file", action="append", default=[], metavar="FILE.py",
                     help="load the Python policies this file defines (docs/policies.md); repeatable")
    sim.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="set a policy parameter")
    sim.add_argument("--exact-estimates", action="store_true", help="policies see real runtimes, not requests")
    sim.add_argument("--seed", type=int, default=0)
    sim.add_argument("--skip-bad-lines", action="store_true", help="skip (and count) lines that cannot be read")
    sim.add_argument("--oversize", choices=("reject", "clip"), default="reject",
                     help="jobs larger than the machine: reject (default) or clip to the machine size")
    sim.add_argument("--overrun", choices=("kill", "run"), default="kill",
                     help="jobs running past their requested time: kill at the request (default; the slurm policy "
                     "kills them at slurmctld's next 30-s time-limit check after it) or let run")
    sim.add_argument("--days", metavar="FROM:TO", help="only jobs submitted in that window, days from the first submit")
    sim.add_argument("--load", type=float, default=1.0, metavar="FACTOR",
                     help="divide inter-arrival times by FACTOR (2 = the same jobs arriving twice as fast)")
    sim.add_argument("--deadlines", type=float, metavar="FRACTION",
                     help="the deadline scenario: this share (0-1) of the jobs, picked with --seed, must end by "
                          "submit + max(24 h, 10 x requested time); the same as --set deadline_fraction=FRACTION, "
                          "for any policy")
    sim.add_argument("--paper-preprocessing", action="store_true",
                     help="the DBF paper's trace preparation: also remove jobs of the queues the header names "
                          "interactive (the same as --set drop_interactive=true)")
    sim.add_argument("--machines", metavar="FILE",
                     help="a machine description (Alea .machines, AleaNG 8 columns, or our YAML/CSV): clusters of "
                          "nodes with node-level placement instead of one pool of --procs processors")
    sim.add_argument("--queues", metavar="FILE|NAME",
                     help="a queue configuration (YAML) or a shipped one: metacentrum-historical, metacentrum-2014 "
                          "(needs --machines)")
    sim.add_argument("--speed-scaling", action="store_true",
                     help="with --machines: runtimes scale with cluster speed (trace runtimes = fastest cluster)")
    sim.add_argument("--memory-unit", choices=("bytes", "KB", "MB", "GB"),
                     help="unit of requested memory in an extended (MetaCentrum/AleaNG) trace "
                          "(default: bytes for MetaCentrum, KB for AleaNG)")
    sim.add_argument("--slurm-conf", metavar="slurm.conf",
                     help="a Slurm site's slurm.conf, for --policy slurm (the machine size too, unless --procs)")
    sim.add_argument("--qos", metavar="FILE", help="with --slurm-conf: the output of sacctmgr -P show qos")
    sim.add_argument("--assoc", metavar="FILE", help="with --slurm-conf: the output of sacctmgr -P show assoc")
    sim.add_argument("--pbs-server", metavar="FILE",
                     help="a PBS site's qmgr -c 'print server' output, for --policy pbs")
    sim.add_argument("--sched-config", metavar="FILE", help="with --pbs-server: the scheduler's sched_config")
    sim.add_argument("--resource-group", metavar="FILE", help="with --pbs-server: the fair-share resource_group file")
    sim.add_argument("--out", required=True, metavar="SCHEDULE.csv")
    sim.add_argument("--summary", metavar="SUMMARY.json")
    sim.add_argument("--rejected-out", metavar="REJECTED.csv",
                     help="the jobs rejected at submission, one per line: ids, user, request, the queue that refused "
                          "it and the limit it exceeds (queue limits need --queues)")
    sim.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                     help="show a progress bar (default: when stderr is a terminal)")
    sim.add_argument("--parse-cache", action=argparse.BooleanOptionalAction, default=True,
                     help="keep the parsed trace for the next run of the same file and options "
                          "(in $SCHEDLAB_PARSE_CACHE, else ~/.cache/schedlab-parse; SCHEDLAB_PARSE_CACHE=off: never; "
                          "at most $SCHEDLAB_PARSE_CACHE_MB megabytes, 2048, least recently used removed first)")
    sim.set_defaults(command=run_simulate, usage=sim)

    pol = commands.add_parser("policies", help="presets, their parameters and defaults (with installed plugins)")
    pol.add_argument("--json", action="store_true")
    pol.add_argument("--policy-file", action="append", default=[], metavar="FILE.py",
                     help="also list the Python policies this file defines; repeatable")
    pol.set_defaults(command=run_policies)

    ins = commands.add_parser("inspect", help="jobs, span, users, sizes and the cleaning report of a trace")
    ins.add_argument("trace")
    ins.add_argument("--procs", type=int)
    ins.add_argument("--skip-bad-lines", action="store_true")
    ins.add_argument("--memory-unit", choices=("bytes", "KB", "MB", "GB"),
                     help="unit of requested memory in an extended (MetaCentrum/AleaNG) trace")
    ins.add_argument("--json", action="store_true")
    ins.set_defaults(command=run_inspect)

    inf = commands.add_parser("infer", help="the queue configuration (and machine) a trace's recorded schedule shows")
    inf.add_argument("trace", help="a trace that records start times and queues (extended SWF, accounting log)")
    inf.add_argument("--machines", metavar="FILE", help="the machine description (default: inferred from the "
                                                        "hosts the jobs ran on)")
    inf.add_argument("--queues-out", required=True, metavar="QUEUES.yaml")
    inf.add_argument("--machines-out", metavar="MACHINES.yaml", help="write the inferred machine description")
    inf.add_argument("--skip-bad-lines", action="store_true")
    inf.add_argument("--memory-unit", choices=("bytes", "KB", "MB", "GB"))
    inf.set_defaults(command=run_infer)

    conv = commands.add_parser("convert", help="any trace (SWF, extended SWF, PBS log, sacct dump) as SWF")
    conv.add_argument("trace")
    conv.add_argument("--out", required=True, metavar="OUT.swf")
    conv.add_argument("--extended", action="store_true",
                      help="extended SWF (MetaCentrum's 21 fields: hosts, queue name, nodespec)")
    conv.add_argument("--procs", type=int)
    conv.add_argument("--skip-bad-lines", action="store_true")
    conv.add_argument("--memory-unit", choices=("bytes", "KB", "MB", "GB"))
    conv.set_defaults(command=run_convert)

    add_compare(commands)

    site = commands.add_parser("site", help="what SchedLab understands of a Slurm or PBS site's configuration files")
    site.add_argument("slurm_conf", metavar="slurm.conf", nargs="?")
    site.add_argument("--qos", metavar="FILE", help="the output of sacctmgr -P show qos")
    site.add_argument("--assoc", metavar="FILE", help="the output of sacctmgr -P show assoc")
    site.add_argument("--pbs-server", metavar="FILE", help="the output of qmgr -c 'print server' (instead of slurm.conf)")
    site.add_argument("--sched-config", metavar="FILE", help="PBS: the scheduler's sched_config")
    site.add_argument("--resource-group", metavar="FILE", help="PBS: the fair-share resource_group file")
    site.set_defaults(command=run_site)

    cal = commands.add_parser("calibrate", help="a Slurm site's replay against its accounting log: the candidate "
                              "explanations of the difference, the closest, how far each partition's delta can be trusted")
    cal.add_argument("trace", metavar="SACCT_DUMP", help="the site's sacct dump (the recorded schedule)")
    cal.add_argument("--slurm-conf", required=True, metavar="slurm.conf")
    cal.add_argument("--qos", metavar="FILE", help="the output of sacctmgr -P show qos")
    cal.add_argument("--assoc", metavar="FILE", help="the output of sacctmgr -P show assoc")
    cal.add_argument("--procs", type=processor_count, help="processors of the machine (default: slurm.conf's CPUs)")
    cal.add_argument("--sprio", metavar="FILE", help="sprio snapshots of the recorded run (sprio -h -o "
                     "\"%%i|%%u|%%r|%%P|%%Y|%%A|%%F|%%J|%%Q\" with # EPOCH lines between; .gz too): the priority "
                     "cycle's phase is read from them")
    cal.add_argument("--squeue", metavar="FILE", help="squeue snapshots of the recorded run (squeue -t all -o "
                     "\"%%i|%%u|%%P|%%q|%%T|%%r\" with # EPOCH lines between; .gz too): their pending reasons "
                     "against the replay's")
    cal.add_argument("--phases", type=int, default=6, metavar="N",
                     help="average each candidate over N phases of the priority cycle (default 6; the timers' start, which "
                     "no file records, moves a replay; N=6 costs six times the simulations)")
    cal.add_argument("--json", metavar="OUT.json", help="also write the whole report as JSON")
    cal.set_defaults(command=run_calibrate)

    fid = commands.add_parser("fidelity", help="a simulated schedule against the recorded one (JSON)")
    fid.add_argument("recorded", metavar="RECORDED.csv", help="the schedule of --policy recorded")
    fid.add_argument("simulated", metavar="SIMULATED.csv", help="a simulated schedule of the same trace")
    fid.add_argument("--capacity", type=processor_count, help="processors of the machine (for utilization)")
    fid.set_defaults(command=run_fidelity)
    return parser


def add_compare(commands: Any) -> None:
    """``compare``: several policies over replicates of one trace, with intervals and verdicts."""
    com = commands.add_parser(
        "compare", help="compare policies over replicates of a trace: differences, bootstrap intervals, verdicts",
        description="Run every policy on many replicates of one trace and tell, for each pair of policies and "
                    "each metric, the paired difference (b - a), its bootstrap confidence interval and a verdict. "
                    "Replicates: weeks (paired weekly windows), windows:N, shake:K (input shaking: Tsafrir, "
                    "Ouaknine & Feitelson, MASCOTS 2007), resample:N (user resampling: Zakay & Feitelson, "
                    "ICPE 2013). Flurries: Tsafrir & Feitelson, IPDPS 2006.")
    com.add_argument("trace", help="a trace of any format the engine reads")
    com.add_argument("--policies", required=True, metavar="P1,P2,...",
                     help="two or more preset names (see `policies`), compared in pairs: a = the earlier, b = the later")
    com.add_argument("--replicates", required=True, metavar="SETS",
                     help="weeks (every week from the first submit), weeks:N (the first N), windows:N (N equal "
                          "stretches), shake:K (K shaken copies, Tsafrir, Ouaknine & Feitelson, MASCOTS 2007), "
                          "resample:N (N user-resampled traces, Zakay & Feitelson, ICPE 2013); several separated by "
                          "commas: the first set's verdicts say whether the others agree")
    com.add_argument("--load", type=float, default=1.0, metavar="F",
                     help="F times the trace's load: windows and shaking divide inter-arrival times by F (as "
                          "simulate --load); resampling adds user streams until the offered work is F times the trace's")
    com.add_argument("--days", metavar="FROM:TO", help="only jobs submitted in that window, days from the first submit")
    com.add_argument("--warmup", default="0", metavar="2d|500j",
                     help="leave out of each run's metrics the jobs submitted in its first days (2d) or its first jobs "
                          "(500j); the runs still simulate them")
    com.add_argument("--cooldown", default="0", metavar="2d|500j",
                     help="leave out of each run's metrics its last days (2d) or last jobs (500j)")
    com.add_argument("--without-flurries", action="store_true",
                     help="remove workload flurries before everything (Tsafrir & Feitelson, IPDPS 2006): a user's jobs "
                          "within --flurry-hours numbering at least --flurry-share of the trace's jobs and at least "
                          "--flurry-min-jobs; the report lists the flurries found either way")
    com.add_argument("--flurry-share", type=float, default=0.02, metavar="FRACTION")
    com.add_argument("--flurry-hours", type=float, default=24.0, metavar="HOURS")
    com.add_argument("--flurry-min-jobs", type=int, default=100, metavar="JOBS")
    com.add_argument("--shake-seconds", type=int, default=60, metavar="S",
                     help="shaking moves each submit time by up to S seconds either way (uniform)")
    com.add_argument("--shake-runtime", type=float, default=0.0, metavar="FRACTION",
                     help="shaking also scales runtimes by up to this fraction either way")
    com.add_argument("--shake-estimate", type=float, default=0.0, metavar="FRACTION",
                     help="shaking also scales requested times by up to this fraction either way")
    com.add_argument("--metrics", metavar="M1,M2,...",
                     help="summary metrics to compare (default: mean_wait,mean_response,mean_bsld,p95_wait,utilization)")
    com.add_argument("--resamples", type=int, default=2000, help="bootstrap resamples (default 2000)")
    com.add_argument("--ci-method", choices=("percentile", "bca"), default="percentile",
                     help="bootstrap interval: percentile (default) or bca (bias-corrected and accelerated)")
    com.add_argument("--confidence", type=float, default=0.95, help="confidence level of the intervals (default 0.95)")
    com.add_argument("--seed", type=int, default=0, help="seeds the shaken copies, the resampled traces and the "
                                                         "bootstrap: the same seed, the same report")
    com.add_argument("--jobs", type=int, default=1, metavar="N",
                     help="worker processes (default 1: in this process); the trace is read once")
    com.add_argument("--procs", type=int, help="machine size (default: the header's MaxProcs, else MaxNodes)")
    com.add_argument("--skip-bad-lines", action="store_true", help="skip (and count) lines that cannot be read")
    com.add_argument("--oversize", choices=("reject", "clip"), default="reject")
    com.add_argument("--overrun", choices=("kill", "run"), default="kill")
    com.add_argument("--memory-unit", choices=("bytes", "KB", "MB", "GB"),
                     help="unit of requested memory in an extended (MetaCentrum/AleaNG) trace")
    com.add_argument("--out", metavar="REPORT.json", help="write the report as JSON")
    com.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                     help="show a progress bar (default: when stderr is a terminal)")
    com.set_defaults(command=run_compare)


def run_compare(args: argparse.Namespace) -> int:
    policies = [name.strip() for name in args.policies.split(",") if name.strip()]
    metrics = ([m.strip() for m in args.metrics.split(",") if m.strip()] if args.metrics
               else list(api.DEFAULT_REPLICATE_METRICS))
    if args.jobs < 1:
        raise WorkloadError(f"--jobs must be at least 1, got {args.jobs}")
    options: dict[str, Any] = dict(
        load=api.check_load_factor(args.load), days=api.parse_days(args.days) if args.days else None,
        counted=api.Counted(api.parse_trim(args.warmup, name="--warmup"),
                            api.parse_trim(args.cooldown, name="--cooldown")),
        flurry_rule=api.FlurryRule(args.flurry_share, args.flurry_hours, args.flurry_min_jobs),
        without_flurries=args.without_flurries,
        shaking=api.Shake(args.shake_seconds, args.shake_runtime, args.shake_estimate),
        metrics=metrics, bootstrap=api.Bootstrap(args.ci_method, args.resamples, args.confidence, args.seed),
        seed=args.seed, capacity=args.procs)
    replicates = api.parse_replicates(args.replicates)
    workload = api.read_trace(args.trace, procs=args.procs, cleaning=cleaning_options(args),
                              cache=api.parse_cache_folder())
    plan = api.plan_replicates(workload, policies, replicates, **options)
    show = sys.stderr.isatty() if args.progress is None else args.progress
    bar = ProgressBar(sys.stderr, unit="of the runs' jobs") if show else None
    began = time.perf_counter()
    outcomes = api.run_replicates(workload, plan, workers=args.jobs, progress=bar.update if bar else None)
    if bar:
        bar.close()
    report = api.combine_replicates(plan, outcomes)
    report.update(trace_file=args.trace, wall_seconds=time.perf_counter() - began, workers=args.jobs)
    print(api.verdict_table(report))
    if args.out:
        write_json(report, args.out)
    return 0


def policy_with_settings(policy: str, settings: list[str]) -> dict[str, Any]:
    """The --policy spec with every --set KEY=VALUE applied (validated by the registry)."""
    spec = api.resolve_policy(policy).to_dict()
    for item in settings:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise PolicyError(f"--set expects KEY=VALUE, got {item!r}")
        spec["params"][key.strip()] = value.strip()
    return api.resolve_policy({"preset": spec["preset"], "ordering": spec["ordering"],
                               "algorithm": spec["algorithm"], "params": spec["params"]}).to_dict()


def load_plugins(files: Sequence[str], modules: Sequence[str] = ()) -> list[str]:
    """Load the Python policies of ``files`` and ``modules`` (a failure: PolicyError, one line) and
    those installed packages declare (a failure: a warning line; the command goes on). The preset
    names ``files`` and ``modules`` define."""
    installed = api.load_policy_plugins(entry_points=True)
    for problem in installed.problems:
        print(f"warning: {problem}", file=sys.stderr)
    given = api.load_policy_plugins(files=files, modules=modules)
    if given.problems:
        raise PolicyError(given.problems[0])
    return given.names


def chosen_policy(args: argparse.Namespace) -> str:
    """The --policy to run: as given (a ``module:Class`` plugin loaded first), else the one policy
    of --policy-file."""
    plugin = args.policy is not None and ":" in args.policy and not args.policy.lstrip().startswith("{")
    names = load_plugins(args.policy_file, [args.policy] if plugin else [])
    if args.policy is not None:
        return names[-1] if plugin else args.policy
    if len(names) != 1:
        found = f"define several policies ({', '.join(names)})" if names else "are not given"
        raise PolicyError(f"--policy is required: the policy files {found}; name one with --policy NAME")
    return names[0]


def refused_note(rejected: pd.DataFrame | None, written_to: str | None) -> None:
    """One line on stderr when jobs were refused at submission (they are not in the schedule): how many
    and why, and where they are listed."""
    if rejected is None or not len(rejected):
        return
    counts = rejected["reason"].astype(str).value_counts()
    why = "; ".join(f"{n} {reason}" for reason, n in counts.items())
    where = f"listed in {written_to}" if written_to else "--rejected-out FILE lists them"
    jobs = "1 job" if len(rejected) == 1 else f"{len(rejected)} jobs"
    print(f"{jobs} refused at submission, not in the schedule ({why}): {where}", file=sys.stderr)


def run_simulate(args: argparse.Namespace) -> int:
    policy = policy_with_settings(chosen_policy(args), args.set)
    began = time.perf_counter()
    platform = platform_options(args)
    procs = args.procs if args.procs is not None or not isinstance(platform, Clusters) else platform.machine.cores
    site = slurm_site_options(args)
    if site is not None and procs is None:
        procs = site.conf.total_cpus or None
    workload = api.read_trace(args.trace, procs=procs, cleaning=cleaning_options(args),
                              cache=api.parse_cache_folder() if args.parse_cache else None)
    parse_seconds = time.perf_counter() - began
    scenario = Scenario(
        trace=workload, policy=policy, platform=platform,
        transforms=Transforms(days=api.parse_days(args.days) if args.days else None, load_factor=args.load,
                              deadlines=args.deadlines, paper_preprocessing=args.paper_preprocessing),
        allocations=api.read_allocations(args.allocations) if args.allocations else None,
        exact_estimates=args.exact_estimates, seed=args.seed, slurm_site=site, pbs_site=pbs_site_options(args))
    show = sys.stderr.isatty() if args.progress is None else args.progress
    bar = ProgressBar(sys.stderr) if show else None
    result = api.run(scenario, progress=bar.update if bar else None)
    if bar:
        bar.close()
    result.to_csv(args.out)
    if args.rejected_out and result.rejected_jobs is not None:
        result.rejected_jobs.to_csv(args.rejected_out, index=False)
    refused_note(result.rejected_jobs, args.rejected_out)
    if args.summary:
        summary = api.summarize(result, parse_seconds=parse_seconds, trace=args.trace, days=args.days,
                                load_factor=args.load)
        write_json(summary, args.summary)
    return 0


def slurm_site_options(args: argparse.Namespace) -> api.SlurmSite | None:
    """The Slurm site of --slurm-conf [--qos] [--assoc], or None."""
    if not args.slurm_conf:
        if args.qos or args.assoc:
            raise WorkloadError("--qos and --assoc need the site's slurm.conf (--slurm-conf FILE)")
        return None
    return api.read_slurm_site(args.slurm_conf, qos=args.qos, assoc=args.assoc)


def pbs_site_options(args: argparse.Namespace) -> api.PbsServer | None:
    """The PBS site of --pbs-server [--sched-config] [--resource-group], or None."""
    if not args.pbs_server:
        if args.sched_config or args.resource_group:
            raise WorkloadError("--sched-config and --resource-group need the site's print server (--pbs-server FILE)")
        return None
    return api.read_pbs_site(args.pbs_server, sched_config=args.sched_config, resource_group=args.resource_group)


def cleaning_options(args: argparse.Namespace) -> Cleaning:
    return Cleaning(oversize=args.oversize, overrun=args.overrun, skip_bad_lines=args.skip_bad_lines,
                    memory_unit=args.memory_unit)


def platform_options(args: argparse.Namespace) -> Pool | Clusters:
    """One pool of the trace's size (--procs, else its header), or the clusters of --machines."""
    if not args.machines:
        if args.queues or args.speed_scaling:
            raise WorkloadError("--queues and --speed-scaling need a machine description (--machines FILE)")
        return Pool(allocation=args.allocation)
    return Clusters(api.read_machines(args.machines),
                    queues=api.read_queue_config(args.queues) if args.queues else None,
                    speed_scaling=args.speed_scaling)


def run_policies(args: argparse.Namespace) -> int:
    load_plugins(args.policy_file)
    entries = api.list_policies()
    if args.json:
        print(json.dumps(entries, indent=2))
        return 0
    for entry in entries:
        print(f"{entry['name']:<16} {entry['description']}")
        print(f"{'':<18}{origin(entry)}")
        for param in entry["params"]:
            print(f"{'':<18}{param['name']} ({param['type']}, default {param['default']}): {param['description']}")
    print_formula_help()
    return 0


def print_formula_help() -> None:
    """The variables a priority formula may use, with units, and an example of the spelling."""
    print("\nYour own order: --policy '{\"ordering\": \"formula\", \"algorithm\": \"easy\", \"params\": "
          "{\"formula\": \"requested * procs\", \"first\": \"smallest\"}}'")
    print("  (algorithms: none, firstfit, easy, conservative; first: smallest or largest; NaN sorts last, "
          "ties by arrival)")
    grammar = api.formula_grammar()
    print("  variables:")
    for variable in grammar["variables"]:
        unit = f" [{variable['unit']}]" if variable["unit"] else ""
        changes = ", evaluated at every pass" if variable["dynamic"] else ""
        print(f"    {variable['name']:<15}{unit} {variable['description']}{changes}")
    print(f"  functions: {', '.join(grammar['functions'])}; operators: {' '.join(grammar['operators'])}")



def origin(entry: dict[str, Any]) -> str:
    """A catalog entry's family and the paper it comes from, in words."""
    if entry.get("plugin"):
        return f"family: {entry['family_title']}; from: {entry['plugin']}"
    paper = entry["paper_citation"] or "none (textbook policy)"
    return f"family: {entry['family_title']}; paper: {paper}"


def run_inspect(args: argparse.Namespace) -> int:
    workload = api.read_trace(args.trace, procs=args.procs,
                              cleaning=Cleaning(skip_bad_lines=args.skip_bad_lines, memory_unit=args.memory_unit))
    info = api.describe(workload)
    if "nodespec" in workload.jobs:
        info["requests"] = api.describe_requests(workload)
    if args.json:
        print(json.dumps(info, indent=2, default=str))
        return 0
    for key, value in info.items():
        if isinstance(value, dict):
            print(f"{key}:")
            for sub, item in value.items():
                print(f"  {sub}: {item}")
        else:
            print(f"{key}: {value}")
    return 0


def run_calibrate(args: argparse.Namespace) -> int:
    site = api.read_slurm_site(args.slurm_conf, qos=args.qos, assoc=args.assoc)
    procs = args.procs or site.conf.total_cpus or None
    workload = api.read_trace(args.trace, procs=procs)
    if not 1 <= args.phases <= 60:
        raise WorkloadError("--phases: expected a whole number from 1 to 60")
    report = api.calibrate_site(workload, site, capacity=procs, sprio=args.sprio, squeue=args.squeue, phases=args.phases)
    for line in api.calibration_lines(report):
        print(line)
    if args.json:
        write_json(report, args.json)
    return 0


def run_site(args: argparse.Namespace) -> int:
    if (args.slurm_conf is None) == (args.pbs_server is None):
        print("error: python -m engine site: give either slurm.conf or --pbs-server FILE (see python -m engine site --help)",
              file=sys.stderr)
        return USAGE_ERROR
    if args.pbs_server is not None:
        server = api.read_pbs_site(args.pbs_server, sched_config=args.sched_config, resource_group=args.resource_group)
        print("\n".join(api.describe_pbs_site(server)))
    else:
        site = api.read_slurm_site(args.slurm_conf, qos=args.qos, assoc=args.assoc)
        print("\n".join(api.describe_site(site)))
    return 0


def run_infer(args: argparse.Namespace) -> int:
    machine = api.read_machines(args.machines) if args.machines else None
    workload = api.read_trace(args.trace,
                              cleaning=Cleaning(skip_bad_lines=args.skip_bad_lines, memory_unit=args.memory_unit))
    found = api.infer_configuration(workload, machine)
    if not found.queues:
        raise WorkloadError("no job has a recorded start: nothing to infer from", file=args.trace)
    write_text(found.queues_yaml(), args.queues_out)
    if args.machines_out:
        if found.machine is None:
            raise WorkloadError("no machine description inferred: "
                                + ("one was given (--machines)" if machine else "the trace records no hosts"),
                                file=args.trace)
        write_text(found.machine_yaml(), args.machines_out)
    left = sum(found.left_out.values())
    print(f"{len(found.queues)} queues from {found.jobs:,} jobs" + (f" ({left:,} without a recorded start left out)"
                                                                    if left else ""), file=sys.stderr)
    return 0


def write_text(text: str, path: str) -> None:
    if path in ("-", "/dev/stdout"):
        sys.stdout.write(text)
        return
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)


def run_convert(args: argparse.Namespace) -> int:
    workload = api.read_trace(args.trace, procs=args.procs,
                              cleaning=Cleaning(skip_bad_lines=args.skip_bad_lines, memory_unit=args.memory_unit))
    api.write_swf(workload, args.out, extended=args.extended)
    report = workload.report
    print(f"{len(workload)} jobs written to {args.out}; left out: {report.total_rejected}, "
          f"bad lines: {report.bad_lines}", file=sys.stderr)
    return 0


def run_fidelity(args: argparse.Namespace) -> int:
    recorded, simulated = read_schedule(args.recorded), read_schedule(args.simulated)
    write_json(api.fidelity(recorded, simulated, capacity=args.capacity), "-")
    return 0


def read_schedule(path: str) -> Any:
    """A schedule CSV written by ``simulate --out``; a missing column is a WorkloadError naming it."""
    try:
        frame = pd.read_csv(path)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise WorkloadError(f"not a schedule CSV: {exc}", file=path) from None
    for column in ("job_id", "submit", "start", "end", "procs", "runtime", "wait"):
        if column not in frame:
            raise WorkloadError("not a schedule CSV written by simulate --out (no such column)", file=path,
                                field=column)
    return frame


def write_json(data: object, path: str) -> None:
    text = json.dumps(data, indent=2, default=str) + "\n"
    if path in ("-", "/dev/stdout"):
        sys.stdout.write(text)
        return
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)


class ProgressBar:
    """A one-line bar on stderr with the time left at the pace so far, redrawn at most ten times a second."""

    def __init__(self, stream: Any, width: int = 40, unit: str = "of jobs") -> None:
        self.stream, self.width, self.last, self.unit = stream, width, 0.0, unit
        self.began = time.monotonic()

    def update(self, fraction: float) -> None:
        now = time.monotonic()
        if fraction < 1.0 and now - self.last < 0.1:
            return
        self.last = now
        filled = int(fraction * self.width)
        left = api.countdown_text(api.time_left(fraction, now - self.began))
        self.stream.write(f"\r[{'#' * filled}{'.' * (self.width - filled)}] {fraction:6.1%} {self.unit}, "
                          f"about {left} left   ")
        self.stream.flush()

    def close(self) -> None:
        self.stream.write("\n")


if __name__ == "__main__":
    sys.exit(main())
