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


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="python -m engine", description="SchedLab's scheduling simulator.")
    commands = parser.add_subparsers(required=True, metavar="COMMAND")

    sim = commands.add_parser("simulate", help="simulate a trace under a policy")
    sim.add_argument("trace", help="an SWF trace, plain or gzip")
    sim.add_argument("--procs", type=int, help="machine size (default: the header's MaxProcs, else MaxNodes)")
    sim.add_argument("--allocation", choices=("count", "buddy"), default="count")
    sim.add_argument("--allocations", metavar="FILE",
                     help="allocations CSV (allocation,members,award,period_days,target_factor,target) for "
                          "policies that use targets, e.g. sfs")
    sim.add_argument("--policy", required=True, help="a preset name (see `policies`) or a JSON policy spec")
    sim.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="set a policy parameter")
    sim.add_argument("--exact-estimates", action="store_true", help="policies see real runtimes, not requests")
    sim.add_argument("--seed", type=int, default=0)
    sim.add_argument("--skip-bad-lines", action="store_true", help="skip (and count) lines that cannot be read")
    sim.add_argument("--oversize", choices=("reject", "clip"), default="reject",
                     help="jobs larger than the machine: reject (default) or clip to the machine size")
    sim.add_argument("--overrun", choices=("kill", "run"), default="kill",
                     help="jobs running past their requested time: kill at the request (default) or let run")
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
    sim.set_defaults(command=run_simulate)

    pol = commands.add_parser("policies", help="presets, their parameters and defaults")
    pol.add_argument("--json", action="store_true")
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

    fid = commands.add_parser("fidelity", help="a simulated schedule against the recorded one (JSON)")
    fid.add_argument("recorded", metavar="RECORDED.csv", help="the schedule of --policy recorded")
    fid.add_argument("simulated", metavar="SIMULATED.csv", help="a simulated schedule of the same trace")
    fid.add_argument("--capacity", type=int, help="processors of the machine (for utilization)")
    fid.set_defaults(command=run_fidelity)
    return parser


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


def run_simulate(args: argparse.Namespace) -> int:
    policy = policy_with_settings(args.policy, args.set)
    began = time.perf_counter()
    workload = api.read_trace(args.trace, procs=args.procs, cleaning=cleaning_options(args),
                              cache=api.parse_cache_folder() if args.parse_cache else None)
    parse_seconds = time.perf_counter() - began
    scenario = Scenario(
        trace=workload, policy=policy, platform=platform_options(args),
        transforms=Transforms(days=api.parse_days(args.days) if args.days else None, load_factor=args.load,
                              deadlines=args.deadlines, paper_preprocessing=args.paper_preprocessing),
        allocations=api.read_allocations(args.allocations) if args.allocations else None,
        exact_estimates=args.exact_estimates, seed=args.seed)
    show = sys.stderr.isatty() if args.progress is None else args.progress
    bar = ProgressBar(sys.stderr) if show else None
    result = api.run(scenario, progress=bar.update if bar else None)
    if bar:
        bar.close()
    result.to_csv(args.out)
    if args.rejected_out and result.rejected_jobs is not None:
        result.rejected_jobs.to_csv(args.rejected_out, index=False)
    if args.summary:
        summary = api.summarize(result, parse_seconds=parse_seconds, trace=args.trace, days=args.days,
                                load_factor=args.load)
        write_json(summary, args.summary)
    return 0


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
    entries = api.list_policies()
    if args.json:
        print(json.dumps(entries, indent=2))
        return 0
    for entry in entries:
        print(f"{entry['name']:<16} {entry['description']}")
        print(f"{'':<18}{origin(entry)}")
        for param in entry["params"]:
            print(f"{'':<18}{param['name']} ({param['type']}, default {param['default']}): {param['description']}")
    return 0



def origin(entry: dict[str, Any]) -> str:
    """A catalog entry's family and the paper it comes from, in words."""
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

    def __init__(self, stream: Any, width: int = 40) -> None:
        self.stream, self.width, self.last = stream, width, 0.0
        self.began = time.monotonic()

    def update(self, fraction: float) -> None:
        now = time.monotonic()
        if fraction < 1.0 and now - self.last < 0.1:
            return
        self.last = now
        filled = int(fraction * self.width)
        left = api.format_duration(api.time_left(fraction, now - self.began))
        self.stream.write(f"\r[{'#' * filled}{'.' * (self.width - filled)}] {fraction:6.1%} of jobs, "
                          f"about {left} left   ")
        self.stream.flush()

    def close(self) -> None:
        self.stream.write("\n")


if __name__ == "__main__":
    sys.exit(main())
