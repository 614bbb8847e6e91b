""""Reproduce a paper": each paper's headline comparison on the closest trace we have, as the
new-experiment form's initial values (or the preset study, or the preview form), with what the paper found.

The papers themselves are named once, in the engine's registry (engine.policies.registry.PAPERS).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from engine import api
from engine.api import PAPERS
from webapp.experiments.models import AT_SWEEP_VALUES


@dataclass(frozen=True)
class Claim:
    """A comparison the paper makes: ``b``'s ``metric`` is ``direction`` ("lower", "higher", "same")
    than ``a``'s (registry preset names; with a sweep, every pair sharing the swept value).

    ``paper``: the paper's own figure in words ("about 40 % lower"), ``source`` where it is (a figure or
    table), ``expected`` the relative change it reports where it gives one ((b - a) / a: -0.4), which a
    single run's verdict holds ours against (engine.api.judge_difference); ``tolerance``: the relative
    change below which ours counts as "about the same"."""

    a: str
    b: str
    metric: str
    direction: str
    paper: str = ""
    source: str = ""
    expected: float | None = None
    tolerance: float = 0.01


@dataclass(frozen=True)
class PaperPreset:
    key: str                                   # URL part; also the registry's PAPERS key
    title: str
    found: str                                 # what the paper reports, to compare with
    trace_hint: str                            # the file in ../shared/data to upload and choose
    setup: str                                 # what the preset runs, in words (and what it leaves out)
    policies: list[str] = field(default_factory=list)       # registry presets ticked
    params: dict[str, dict[str, Any]] = field(default_factory=dict)   # preset -> parameter values
    workload: dict[str, Any] = field(default_factory=dict)  # workload options (deadline_fraction, ...)
    days: tuple[str, str] = ("", "")           # time window, days from the first submit
    allocation: str = "count"
    exact_estimates: bool = False
    sweep_param: str = ""
    sweep_values: str = ""
    study: str = ""                            # a webapp.studies preset instead of an experiment
    preview: dict[str, str] = field(default_factory=dict)   # webapp.preview.forms.PreviewForm values instead
    match: str = ""                            # pre-select a visible trace / machine whose name contains this
    #: the replicates the form chooses by default where the paper's claim is a comparison ("windows:6"),
    #: and the claims our replicated result is held against (on the comparison page)
    replicates: str = ""
    claims: tuple[Claim, ...] = ()
    #: the traces the paper used, best first (file names in ../shared/data/swf, without .gz): the form
    #: preselects the first one uploaded, and names them when none is
    trace_files: tuple[str, ...] = ()
    #: the trace comes with an allocations file (the SFS scenario's, named "<trace name> allocations")
    with_allocations: bool = False

    @property
    def citation(self) -> str:
        """The paper's citation, from the engine's registry."""
        return PAPERS[self.key].citation if self.key in PAPERS else ""

    def initial(self) -> dict[str, Any]:
        """The new-experiment form's initial values (webapp.experiments.forms.ExperimentForm names)."""
        values: dict[str, Any] = {"allocation": self.allocation, "exact_estimates": self.exact_estimates,
                                  "sweep_param": self.sweep_param, "sweep_values": self.sweep_values,
                                  "days_from": self.days[0], "days_to": self.days[1]}
        values.update({f"policy_{name}": True for name in self.policies})
        for preset, params in self.params.items():
            values.update({f"param_{preset}_{name}": value for name, value in params.items()})
        values.update({f"workload_{name}": value for name, value in self.workload.items()})
        if self.replicates:
            kind, _, count = self.replicates.partition(":")
            values.update(replicates=kind, replicate_count=int(count) if count else None)
        return values


PRESETS: dict[str, PaperPreset] = {p.key: p for p in (
    PaperPreset(
        key="plan", title="PLAN 1/2/3 against EASY backfilling",
        found=("Against FCFS with EASY backfilling on ANL, LLNL-Atlas and SDSC-Blue, plan-based scheduling "
               "cut the job wait time by about 40 % and the response time by about 30 % while utilization rose "
               "slightly (LLNL: 0.744 under EASY, 0.750 / 0.751 / 0.758 under PLAN 1 / 2 / 3, highest for "
               "PLAN 3); PLAN 2 beat EASY's mean wait in every month, PLAN 1 and PLAN 3 in all but two LLNL "
               "months; each decision took under a second."),
        trace_hint="swf/LLNL-Atlas-2006-2.1-cln.swf.gz (one busy month: days 150 to 180)",
        setup="PLAN 1, PLAN 2 and PLAN 3 with the paper's annealing (T0 = 1, Tth = 1e-4, N = 100, r = 0.9) and "
              "EASY, on one month of the trace (the whole year takes hours under PLAN).",
        policies=["plan1", "plan2", "plan3", "easy"], days=("150", "180"),
        trace_files=("LLNL-Atlas-2006-2.1-cln.swf", "SDSC-BLUE-2000-4.2-cln.swf"),
        replicates="windows:6",
        claims=tuple(claim for plan in ("plan1", "plan2", "plan3") for claim in (
            Claim("easy", plan, "mean_wait", "lower", "about 40 % lower (ANL, PLAN 1 and 2; abstract and §V)", "Fig. 4",
                  expected=-0.40),
            Claim("easy", plan, "mean_response", "lower", "about 30 % lower (abstract and §VI)", "Fig. 5",
                  expected=-0.30),
            Claim("easy", plan, "utilization", "higher", "slightly higher: LLNL 0.744 under EASY, 0.750 to 0.758 "
                  "under PLAN", "Table II", tolerance=0.001))),
    ),
    PaperPreset(
        key="paragon", title="Paragon: SSS, sorted, backfilling and time sharing against load",
        found=("On the 96-node Paragon's workload, sorting the queue by size improved the average turnaround "
               "over SSS (FCFS), more so at higher job invocation rates, at the cost of fairness (the mean "
               "skipping count grew with load); a maximum skipping count of 10 kept a large part of the gain; "
               "sorting with backfilling was considerably better than either alone; time sharing (TSS) improved "
               "performance considerably over space sharing."),
        trace_hint="swf/KTH-SP2-1996-2.1-cln.swf.gz (100 processors; the paper's Paragon had 96)",
        setup="The preset study: SSS (fcfs), sorted, EASY with exact estimates, sorted + EASY and time sharing "
              "at load factors 0.3 to 0.8, buddy allocation; sorted-masc over MASC 1 to 50.",
        study="paragon", trace_files=("KTH-SP2-1996-2.1-cln.swf",),
    ),
    PaperPreset(
        key="metacentrum", title="CPU-time against multi-resource fair-share (MetaCentrum 2014)",
        found=("After the 2014 reconfiguration (new queues and fair-share charging CPU and RAM), throughput "
               "rose markedly while waits stayed decent; the multi-resource fair-share gave higher penalties, "
               "and longer waits, to jobs asking for much RAM than the CPU-time fair-share had."),
        trace_hint="metacentrum/alea/wagap-2013.swf and its machine description metacentrum/alea/wagap-2013.swf.machines",
        setup=("A reconfiguration preview on the two clusters of wagap-2013.swf.machines: the current configuration "
               "(by default the 2013 queues as the trace recorded them) and the shipped metacentrum-2014 queues, both "
               "under multi-resource fair-share with EASY backfilling (mrfs-easy), and the 2014 queues under CPU-time "
               "fair-share (fairshare-easy); the preview page draws the paper's Figs. 8–9 from those runs."),
        preview={"name": "MetaCentrum 2014: CPU vs multi-resource fair-share",
                 "proposed": "shipped:metacentrum-2014", "policy": "mrfs-easy"},
        match="wagap",
    ),
    PaperPreset(
        key="sfs", title="Simultaneous Fair-Share: the §9 scenario",
        found=("Under linear priority, Bob's many small jobs waited days behind Alice's (eligible time "
               "dominant) or longer still (node count dominant), and Chris's large job waited days too; with "
               "SFS, Bob's jobs started at once with a steady throughput, and with node count dominant SFS "
               "Chris's job also started soon: every allocation got served."),
        trace_hint="the generated scenario (Allocations → Generate the SFS paper's scenario): its trace and "
                   "its allocations file",
        setup="Linear priority with eligible time dominant and node count dominant, and SFS with each; choose "
              "the scenario's allocations file below.",
        policies=["linear-age", "linear-size", "sfs-age", "sfs-size"],
        trace_files=("sfs-scenario-seed*",), with_allocations=True,
    ),
    PaperPreset(
        key="dbf", title="DBF against conservative and EASY at 20–80 % deadline jobs",
        found=("DBF lowered the regular jobs' average wait and stretch compared with conservative backfilling "
               "and EASY, decreasing linearly as the share of deadline jobs grew: on SDSC-DS it more than halved "
               "the average wait already at 20 % deadline jobs; at 20 % it was at least on par with EASY (up to "
               "25 % lower wait on HPC2N) while still bounding completion times. Jobs that waited 0 under all "
               "three algorithms are left out of the regular jobs' figures (the comparison page's filter)."),
        trace_hint="swf/SDSC-DS-2004-2.1-cln.swf.gz (also SDSC-BLUE-2000, HPC2N-2002)",
        setup="DBF, conservative and EASY on the paper's trace preparation (interactive jobs dropped), one run "
              "per share of deadline jobs 0.2, 0.4, 0.6, 0.8 (the same seeded deadline jobs for every policy).",
        policies=["dbf", "conservative", "easy"], workload={"drop_interactive": True},
        trace_files=("SDSC-DS-2004-2.1-cln.swf", "SDSC-BLUE-2000-4.2-cln.swf", "HPC2N-2002-2.2-cln.swf"),
        sweep_param="deadline_fraction", sweep_values="0.2, 0.4, 0.6, 0.8",
        replicates="windows:6",
        claims=(
            Claim("conservative", "dbf", "mean_wait_regular", "lower", "lower at every share, falling as the share "
                  "grows; more than halved on SDSC-DS at 20 %", "Fig. 2"),
            Claim("easy", "dbf", "mean_wait_regular", "lower", "on par or lower: up to 25 % lower (HPC2N, 20 %), "
                  "slightly higher only on SDSC-BLUE at 20 %", "Fig. 2"),
            Claim("conservative", "dbf", "mean_wait", "lower", "lower for all jobs too, more so as the share grows",
                  "Fig. 4"),
            Claim("easy", "dbf", "mean_wait", "lower", "no clear winner over all jobs; similar or lower on most "
                  "traces from 40 % deadline jobs", "Fig. 4"),
        ),
    ),
)}


def experiment_presets() -> dict[str, PaperPreset]:
    """The presets that fill the new-experiment form (not a study's or a preview's): the ones an
    experiment records as its ``paper``."""
    return {key: preset for key, preset in PRESETS.items() if not preset.study and not preset.preview}


def trace_stem(name: str) -> str:
    """A trace file's name without folders and compression suffix, lower case ("sdsc-ds-2004-2.1-cln.swf")."""
    name = name.replace("\\", "/").rsplit("/", 1)[-1].lower()
    return name[:-3] if name.endswith(".gz") else name


def file_matches(name: str, wanted: str) -> bool:
    """``name`` is the ``wanted`` file; a ``wanted`` ending in * is a prefix ("sfs-scenario-seed*": any seed)."""
    return name.startswith(wanted[:-1]) if wanted.endswith("*") else name == wanted


def paper_trace(preset: PaperPreset, traces: Any) -> Any | None:
    """The visible trace the paper used (its uploaded file's name is one of ``trace_files``, best
    first; the newest upload of it), else None. ``traces``: Trace rows (a queryset or a list)."""
    for wanted in preset.trace_files:
        found = [trace for trace in traces if file_matches(trace_stem(trace.original_name or ""), trace_stem(wanted))]
        if found:
            return max(found, key=lambda trace: trace.pk)
    return None


def paper_allocations(preset: PaperPreset, trace: Any | None, allocation_sets: Any) -> Any | None:
    """The allocations file generated with the paper's trace (the SFS scenario's "<name> allocations")."""
    if not preset.with_allocations or trace is None:
        return None
    found = [a for a in allocation_sets if a.name == f"{trace.name} allocations"]
    return max(found, key=lambda a: a.pk) if found else None


def paper_trace_note(preset: PaperPreset, chosen: Any | None, allocations: Any | None = None) -> str:
    """What the form says about the trace: the paper's one chosen, or which file to upload."""
    if not preset.trace_files:
        return ""
    if preset.with_allocations:
        if chosen is None:
            return ("None of your traces is the SFS scenario: generate it first (Allocations → Generate the SFS "
                    "paper's scenario); it makes the trace and its allocations file.")
        if allocations is None:
            return (f"Chosen: “{chosen.name}”, the generated scenario, but its allocations file "
                    f"(“{chosen.name} allocations”) is gone: generate the scenario again.")
        return f"Chosen: “{chosen.name}”, the generated scenario, with its allocations file “{allocations.name}”."
    files = ", ".join(f"{name}.gz" for name in preset.trace_files)
    if chosen is not None:
        return f"Chosen: “{chosen.name}”, the uploaded {chosen.original_name}, a trace the paper used."
    return (f"None of your traces is one the paper used ({files} in the shared data's swf folder): upload "
            f"{preset.trace_files[0]}.gz first; with another trace the results cannot be held against the paper's.")


def claim_pairs(report: dict[str, Any], claim: Claim) -> list[tuple[str, str]]:
    """The report's (a, b) policy names the claim is about: a policy of preset ``claim.a`` and one of
    ``claim.b`` with the same workload options (one pair per swept value, e.g. deadline_fraction)."""
    options = [option["name"] for option in api.workload_options()]

    def shared(spec: dict[str, Any]) -> tuple:
        """Each option's value, or None where the policy's schedule does not read it (EASY run once in a
        deadline-share sweep pairs with DBF at every share)."""
        resolved = api.resolve_policy(spec)
        return tuple(repr((spec.get("params") or {}).get(name)) if api.schedule_depends_on(name, resolved) else None
                     for name in options)

    def same_workload(a: tuple, b: tuple) -> bool:
        return all(x is None or y is None or x == y for x, y in zip(a, b))

    policies = report.get("policies", [])
    return [(a["name"], b["name"]) for a in policies for b in policies
            if a["spec"].get("preset") == claim.a and b["spec"].get("preset") == claim.b
            and same_workload(shared(a["spec"]), shared(b["spec"]))]


def judge_paper(report: dict[str, Any], preset: PaperPreset) -> list[dict[str, Any]]:
    """Whether our replicated result agrees with each of the paper's claims (engine.api.judge_claim):
    [{"status": "agrees" | "contradicts" | "cannot tell", "sentence", "pair"}], one per pair compared."""
    measured = {pair["metric"] for pair in report.get("pairs", [])}
    return [api.judge_claim(report, a, b, claim.metric, claim.direction)
            for claim in preset.claims if claim.metric in measured for a, b in claim_pairs(report, claim)]


def paper_verdict(judgements: list[dict[str, Any]]) -> str:
    """One line over every claim: "agrees", "contradicts" (any claim contradicted) or "cannot tell"."""
    if not judgements:
        return ""
    statuses = {j["status"] for j in judgements}
    if "contradicts" in statuses:
        return "Our replicated result contradicts at least one of the paper's claims."
    if statuses == {"agrees"}:
        return "Our replicated result agrees with every claim of the paper checked here."
    return "Our replicated result agrees with some of the paper's claims and cannot tell the others from noise."


def paper_runs(runs: list[Any], labels: list[str]) -> list[dict[str, Any]]:
    """Finished runs as :func:`judge_runs` reads them: {"name", "spec", "summary", "value" (the swept
    value or None), "at" (a run swept once: its figures derived at each swept value, by repr)}.
    ``runs``: webapp.experiments.models.Run rows; ``labels``: their names on the page."""
    return [{"name": label, "spec": run.policy or {}, "summary": run.summary or {}, "value": run.sweep_value,
             "at": {repr(entry.get("value")): entry for entry in (run.summary or {}).get(AT_SWEEP_VALUES) or []}}
            for label, run in zip(labels, runs) if run.status == "done" and run.summary]


def _value_at(run: dict[str, Any], other: dict[str, Any], metric: str) -> float | None:
    """``run``'s ``metric`` where ``other`` ran: a run swept once has its deadline figures at each share
    (derived from its one schedule), its other figures are the same at every share."""
    derived = run["at"].get(repr(other["value"])) if other["value"] is not None else None
    if derived is not None and metric in derived:
        return derived[metric]
    return run["summary"].get(metric)


def judge_runs(preset: PaperPreset, runs: list[dict[str, Any]], sweep_param: str = "") -> list[dict[str, Any]]:
    """Each of the paper's claims against the runs' own metrics (a single run per policy and value: no
    interval; engine.api.judge_difference), one row per claim: {"claim", "said" (the claim in words),
    "status" ("agree" | "partly" | "disagree" | "cannot tell"), "pairs": [{"a", "b", "at", "ours", "status",
    "why"}]}. A claim with no pair of runs among ``runs`` (a policy left out) is left out."""
    rows = []
    by_name = {run["name"]: run for run in runs}
    for claim in preset.claims:
        pairs = []
        for a_name, b_name in claim_pairs({"policies": runs}, claim):
            a, b = by_name[a_name], by_name[b_name]
            a_value, b_value = _value_at(a, b, claim.metric), _value_at(b, a, claim.metric)
            verdict = api.judge_difference(a_value, b_value, claim.direction, expected=claim.expected,
                                           tolerance=claim.tolerance)
            swept = b["value"] if b["value"] is not None else a["value"]
            ours = (f"{api.metric_text(claim.metric, b_value)} against {api.metric_text(claim.metric, a_value)}"
                    + (f" ({api.change_text(verdict['relative'])})" if verdict["relative"] is not None else ""))
            pairs.append({"a": a_name, "b": b_name, "at": f"at {sweep_param} {swept}" if swept is not None and sweep_param
                          else "", "ours": ours, "status": verdict["status"], "why": verdict["why"]})
        if not pairs:
            continue
        label = api.metric_label(claim.metric)
        said = (f"{claim.b}'s {label[:1].lower() + label[1:]} "
                + ("the same as" if claim.direction == "same" else f"{claim.direction} than") + f" {claim.a}'s")
        rows.append({"claim": claim, "said": said, "status": api.overall_verdict(p["status"] for p in pairs),
                     "pairs": pairs})
    return rows


def findings_verdict(rows: list[dict[str, Any]]) -> str:
    """One line over the claims judged from single runs."""
    if not rows:
        return ""
    counts = {status: sum(row["status"] == status for row in rows) for status in ("agree", "partly", "disagree")}
    told = ", ".join(f"{count} {status}" for status, count in counts.items() if count)
    return (f"Our runs against the paper's {len(rows)} claim{'s' if len(rows) != 1 else ''} checked here: "
            f"{told or 'none could be judged'} (single runs, no interval: replicates tell a real difference from noise).")
