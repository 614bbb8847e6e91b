"""Priority formulas: an ordering whose parameter is an arithmetic expression over the job and the moment.

``{"ordering": "formula", "algorithm": "easy", "params": {"formula": "requested * procs", "first": "smallest"}}``

**Safety.** The text is parsed with Python's :mod:`ast` and every node is checked against a whitelist
(numbers, ``+ - * / **``, unary ``-``/``+``, parentheses, the names of :data:`VARIABLES`, calls of
:data:`FUNCTIONS` by name); nothing is ever passed to ``eval`` or ``compile``. The checked tree is
turned into a tree of tuples that numpy evaluates, in float64, over a whole column of jobs at once:
a huge power is ``inf``, never a huge integer. A bad formula is one :class:`PolicyError` line naming
the column and what is wrong.

**Values that are not numbers.** Where the formula is NaN for a job (``0/0``, ``log(-1)``, ``inf - inf``)
that job sorts after every job with a number, whichever comes first; ``+inf`` and ``-inf`` are numbers
(``+inf`` is the largest). Equal values, and NaN with NaN, go by arrival (job number). A run never
stops on such a value.

**Speed.** A formula over job data only (no :data:`DYNAMIC` name) is a key computed once for every
job: the queue is a plain :class:`~engine.policies.ordering.WaitingQueue` with a rank per job, the
same fast indexed queue (and compiled loops) as ``sjf``. A formula with ``wait``, ``now``, ``free``,
``usage`` or ``fairshare`` is evaluated once per scheduling pass, vectorised over the waiting jobs
(:class:`FormulaKey`, the key of a :class:`~engine.policies.ordering.ReorderedQueue`, which sorts
only as far as the pass walks); its parts that use job data only are computed once for every job
beforehand. Its variables are read when the pass begins (``free`` does not change as the pass starts jobs).
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from engine.policies.base import Param, PolicyError
from engine.policies.fairshare import DECAY_FACTOR, DECAY_HOURS, FairShareAccount, usage_account
from engine.policies.ordering import ReorderedQueue, WaitingQueue
from engine.policies.priority import queue_priorities
from engine.policies.registry import Component, Preset, register, register_ordering
from engine.sim.simulator import Simulation

#: longest formula accepted (characters): a formula is a line, not a program
MAX_LENGTH = 500


@dataclass(frozen=True)
class Variable:
    """A name a formula may use: its unit, what it is, and whether it changes while a job waits."""

    name: str
    unit: str
    description: str
    dynamic: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "unit": self.unit, "description": self.description, "dynamic": self.dynamic}


VARIABLES: dict[str, Variable] = {v.name: v for v in (
    Variable("wait", "s", "time since the job was submitted", dynamic=True),
    Variable("submit", "s", "submit time, in the trace's own time base"),
    Variable("requested", "s", "requested time (walltime request, at least 1 s; the runtime with exact estimates)"),
    Variable("procs", "processors", "processors requested"),
    Variable("nodes", "nodes", "nodes requested (traces with node requests only)"),
    Variable("mem", "KB per node", "memory requested per node (traces with memory requests only)"),
    Variable("gpus", "GPUs per node", "GPUs requested per node (traces with GPU requests only)"),
    Variable("queue_priority", "", "priority of the job's queue (queue configuration; 0 without one)"),
    Variable("usage", "processor-seconds", "the user's decayed usage of finished jobs (as fair-share: "
             "multiplied by decay_factor every decay_hours)", dynamic=True),
    Variable("fairshare", "0-1", "the user's fair-share factor 2^(-(usage / all usage) / share), equal shares; "
             "1 while nobody has usage", dynamic=True),
    Variable("capacity", "processors", "processors of the machine"),
    Variable("free", "processors", "free processors when the scheduling pass begins", dynamic=True),
    Variable("now", "s", "time of the scheduling pass, in the trace's own time base", dynamic=True),
)}
#: names whose value changes while a job waits: a formula with one is evaluated at every pass
DYNAMIC = frozenset(name for name, v in VARIABLES.items() if v.dynamic)
#: names read from a workload column that not every trace has
OPTIONAL_COLUMNS = ("nodes", "mem", "gpus")


def _reduce(function: Callable[[Any, Any], Any]) -> Callable[..., Any]:
    def reduced(*values: Any) -> Any:
        result = values[0]
        for value in values[1:]:
            result = function(result, value)
        return result
    return reduced


#: function name -> (numpy function, least and most arguments)
FUNCTIONS: dict[str, tuple[Callable[..., Any], int, int]] = {
    "log": (np.log, 1, 1), "log2": (np.log2, 1, 1), "log10": (np.log10, 1, 1), "sqrt": (np.sqrt, 1, 1),
    "exp": (np.exp, 1, 1), "pow": (np.power, 2, 2), "min": (_reduce(np.fmin), 2, 16),
    "max": (_reduce(np.fmax), 2, 16), "abs": (np.abs, 1, 1), "floor": (np.floor, 1, 1), "ceil": (np.ceil, 1, 1),
}
_OPERATORS: dict[type, tuple[str, Callable[[Any, Any], Any]]] = {
    ast.Add: ("+", np.add), ast.Sub: ("-", np.subtract), ast.Mult: ("*", np.multiply),
    ast.Div: ("/", np.true_divide), ast.Pow: ("**", np.power),
}
#: what to say about syntax outside the whitelist, by node type
_UNSUPPORTED: dict[type, str] = {
    ast.Attribute: "attribute access (a.b)", ast.Subscript: "subscripts (a[i])", ast.Lambda: "lambda",
    ast.Compare: "comparisons", ast.BoolOp: "and/or", ast.IfExp: "if/else", ast.Tuple: "tuples (a, b)",
    ast.List: "lists", ast.Dict: "dicts", ast.Set: "sets", ast.Starred: "*arguments",
    ast.NamedExpr: "assignment (:=)", ast.JoinedStr: "strings", ast.ListComp: "comprehensions",
    ast.GeneratorExp: "comprehensions", ast.SetComp: "comprehensions", ast.DictComp: "comprehensions",
    ast.Await: "await", ast.Yield: "yield", ast.YieldFrom: "yield", ast.Slice: "slices",
}

# the checked tree: ("num", value) | ("var", name) | ("neg", a) | ("op", function, a, b)
# | ("call", function, args) | ("pre", full column or number): a part over job data computed beforehand
Tree = tuple


class FormulaError(PolicyError):
    """A formula outside the grammar: one line naming the column (1 = the first character)."""

    def __init__(self, column: int | None, what: str) -> None:
        self.column, self.what = column, what
        super().__init__(f"formula, column {column}: {what}" if column is not None else f"formula: {what}")


@dataclass(frozen=True)
class Formula:
    """A checked formula: its text, the tree numpy evaluates and the variable names it uses."""

    text: str
    tree: Tree
    names: frozenset[str]

    @property
    def dynamic(self) -> bool:
        """Whether a value changes while the job waits (then it is evaluated at every pass)."""
        return bool(self.names & DYNAMIC)

    def evaluate(self, value_of: Callable[[str], Any], count: int) -> np.ndarray:
        """The formula for ``count`` jobs, ``value_of(name)`` giving each variable (an array of
        ``count`` values or one number for all); float64, NaN and inf as they come."""
        with np.errstate(all="ignore"):
            result = _evaluate(self.tree, value_of)
        values = np.asarray(result, dtype=np.float64)
        return np.full(count, float(values)) if values.ndim == 0 else values


def parse(text: Any) -> Formula:
    """Check ``text`` against the grammar; a :class:`FormulaError` names the column and the fault."""
    if not isinstance(text, str):
        raise FormulaError(None, f"expected text, got {type(text).__name__}")
    source = text.strip()
    if not source:
        raise FormulaError(None, "empty; write an expression such as requested * procs")
    if len(source) > MAX_LENGTH:
        raise FormulaError(None, f"longer than {MAX_LENGTH} characters")
    if "\n" in source or "\r" in source:
        raise FormulaError(None, "one line only")
    lead = len(text) - len(text.lstrip())
    try:
        expression = ast.parse(source, mode="eval")
    except SyntaxError as error:
        if not error.offset or error.offset > len(source):      # Python reports an early end at 0
            raise FormulaError(len(source) + 1 + lead, "the formula ends too early") from None
        raise FormulaError(error.offset + lead, f"syntax error ({error.msg})") from None
    except (RecursionError, MemoryError, ValueError):
        raise FormulaError(None, "too deeply nested") from None
    names: set[str] = set()
    try:
        tree = _check(expression.body, names, source, lead)
    except RecursionError:
        raise FormulaError(None, "too deeply nested") from None
    return Formula(source, tree, frozenset(names))


def _check(node: ast.AST, names: set[str], source: str, lead: int) -> Tree:
    column = getattr(node, "col_offset", 0) + 1 + lead
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or not isinstance(node.value, (int, float)):
            raise FormulaError(column, f"only numbers are allowed, not {node.value!r}")
        return ("num", float(node.value) if abs(node.value) < 1e308 else math.copysign(math.inf, node.value))
    if isinstance(node, ast.Name):
        if node.id not in VARIABLES:
            hint = f" ({node.id} is a function: call it, {node.id}(x))" if node.id in FUNCTIONS else ""
            raise FormulaError(column, f"unknown name {node.id!r}{hint}; names: {', '.join(VARIABLES)}")
        names.add(node.id)
        return ("var", node.id)
    if isinstance(node, ast.UnaryOp):
        if isinstance(node.op, ast.USub):
            return ("neg", _check(node.operand, names, source, lead))
        if isinstance(node.op, ast.UAdd):
            return _check(node.operand, names, source, lead)
        raise FormulaError(column, f"unsupported operator {_symbol(node.op)}; operators: + - * / **")
    if isinstance(node, ast.BinOp):
        operator = _OPERATORS.get(type(node.op))
        if operator is None:
            where = _operator_column(node, source, lead)
            hint = ": write powers as a ** b or pow(a, b)" if isinstance(node.op, ast.BitXor) else ""
            raise FormulaError(where, f"unsupported operator {_symbol(node.op)}{hint}; operators: + - * / **")
        return ("op", operator[1], _check(node.left, names, source, lead), _check(node.right, names, source, lead))
    if isinstance(node, ast.Call):
        if not isinstance(node.func, ast.Name) or node.func.id not in FUNCTIONS:
            called = node.func.id if isinstance(node.func, ast.Name) else ast.unparse(node.func)
            raise FormulaError(column, f"unknown function {called!r}; functions: {', '.join(FUNCTIONS)}")
        name = node.func.id
        if node.keywords:
            raise FormulaError(column, f"{name}() takes no keyword arguments")
        function, least, most = FUNCTIONS[name]
        if not least <= len(node.args) <= most:
            wanted = str(least) if least == most else f"{least} to {most}"
            raise FormulaError(column, f"{name}() takes {wanted} argument{'s' if most > 1 else ''}, "
                                       f"got {len(node.args)}")
        return ("call", function, tuple(_check(arg, names, source, lead) for arg in node.args))
    what = _UNSUPPORTED.get(type(node), type(node).__name__)
    raise FormulaError(column, f"unsupported syntax: {what}; a formula is numbers, names, + - * / **, "
                               "parentheses and function calls")


def _symbol(op: ast.AST) -> str:
    return {ast.BitXor: "^", ast.BitAnd: "&", ast.BitOr: "|", ast.Mod: "%", ast.FloorDiv: "//", ast.LShift: "<<",
            ast.RShift: ">>", ast.MatMult: "@", ast.Invert: "~", ast.Not: "not"}.get(type(op), type(op).__name__)


def _operator_column(node: ast.BinOp, source: str, lead: int) -> int:
    """The column of a binary operator: the first character after its left operand and any
    spaces or closing parentheses."""
    at = getattr(node.left, "end_col_offset", None) or node.col_offset
    while at < len(source) and source[at] in " )":
        at += 1
    return at + 1 + lead


def _same(value: Any) -> Any:
    return value


def _evaluate(tree: Tree, value_of: Callable[[str], Any], take: Callable[[Any], Any] = _same) -> Any:
    """The value of ``tree``: variables from ``value_of``, parts computed beforehand through ``take``."""
    kind = tree[0]
    if kind == "num":
        return tree[1]
    if kind == "pre":
        return take(tree[1])
    if kind == "var":
        return value_of(tree[1])
    if kind == "neg":
        return np.negative(_evaluate(tree[1], value_of, take))
    if kind == "op":
        return tree[1](_evaluate(tree[2], value_of, take), _evaluate(tree[3], value_of, take))
    return tree[1](*(_evaluate(arg, value_of, take) for arg in tree[2]))


def _names(tree: Tree) -> set[str]:
    kind = tree[0]
    if kind == "var":
        return {tree[1]}
    if kind in ("num", "pre"):
        return set()
    if kind == "neg":
        return _names(tree[1])
    if kind == "op":
        return _names(tree[2]) | _names(tree[3])
    return set().union(*(_names(arg) for arg in tree[2]))


def precompute(tree: Tree, value_of: Callable[[str], Any]) -> Tree:
    """``tree`` with each largest part that uses no dynamic name evaluated once (for every job):
    what is left to do at each pass is the dynamic part."""
    if tree[0] in ("num", "pre"):
        return tree
    if not _names(tree) & DYNAMIC:
        with np.errstate(all="ignore"):
            return ("pre", _evaluate(tree, value_of))
    if tree[0] == "var":
        return tree
    if tree[0] == "neg":
        return ("neg", precompute(tree[1], value_of))
    if tree[0] == "op":
        return ("op", tree[1], precompute(tree[2], value_of), precompute(tree[3], value_of))
    return ("call", tree[1], tuple(precompute(arg, value_of) for arg in tree[2]))


def check_formula(value: Any) -> Formula:
    """The ``formula`` parameter's check (resolve calls it; the web checks a formula as it is
    typed): the checked formula, or a FormulaError (a PolicyError) naming the column and the fault."""
    return parse(value)


# --------------------------------------------------------------------------- the order


def order_of(jobs: np.ndarray, values: np.ndarray, largest: bool) -> np.ndarray:
    """``jobs`` in priority order by ``values`` (one per job): smallest (or largest) first, NaN
    after every number, ties by job number (= arrival)."""
    key = np.negative(values) if largest else values
    nan = np.isnan(key)
    if not nan.any():
        return jobs[np.lexsort((jobs, key))]
    return jobs[np.lexsort((jobs, np.where(nan, 0.0, key), nan))]


def ranks_of(values: np.ndarray, largest: bool) -> np.ndarray:
    """Each job's place in the priority order of all jobs (the key of the indexed queue)."""
    n = len(values)
    rank = np.empty(n, dtype=np.int64)
    rank[order_of(np.arange(n, dtype=np.int64), values, largest)] = np.arange(n, dtype=np.int64)
    return rank


Column = np.ndarray | float


class JobColumns:
    """The static variables of every job of a simulation, read once (a missing column is an error
    naming the variable when a formula asks for it)."""

    def __init__(self, sim: Simulation) -> None:
        self.sim = sim
        self._cache: dict[str, Column] = {}

    def __call__(self, name: str) -> Column:
        if name not in self._cache:
            self._cache[name] = self._read(name)
        return self._cache[name]

    def _read(self, name: str) -> Column:
        sim = self.sim
        jobs = sim.workload.jobs
        if name == "submit":
            return np.asarray(sim.submit, dtype=np.float64)
        if name == "requested":
            return np.asarray(sim.estimate, dtype=np.float64)
        if name == "procs":
            return np.asarray(sim.procs, dtype=np.float64)
        if name == "capacity":
            return float(sim.capacity)
        if name == "queue_priority":
            return queue_priority(sim)
        if name in OPTIONAL_COLUMNS:
            if name not in jobs:
                raise PolicyError(f"formula: this trace has no {name} column ({name}: "
                                  f"{VARIABLES[name].description})")
            return jobs[name].to_numpy(dtype=np.float64)
        raise KeyError(name)


def queue_priority(sim: Simulation) -> np.ndarray:
    """Per job, its queue's priority: from the queue configuration on clusters of nodes, else
    ``context["queue_priorities"]`` (engine.policies.priority); 0 without either."""
    allocator = sim.allocator
    queues, queue_of = getattr(allocator, "queues", None), getattr(allocator, "queue_of", None)
    if queues is not None and queue_of is not None:
        return np.array([float(q.priority) for q in queues.queues], dtype=np.float64)[np.asarray(queue_of)]
    return queue_priorities(sim)


class UserUsage:
    """Each user's decayed usage (fair-share's accounting, engine.policies.fairshare) and fair-share factor."""

    def __init__(self, sim: Simulation, params: Mapping[str, Any]) -> None:
        self.sim = sim
        self.account: FairShareAccount = usage_account(sim, params)
        users, self.code = np.unique(np.asarray(sim.user, dtype=np.int64), return_inverse=True)
        self.number = {int(user): i for i, user in enumerate(users.tolist())}
        self.share = 1.0 / max(len(users), 1)

    def usage(self) -> np.ndarray:
        """Decayed usage now, per user number (``code`` maps jobs to user numbers)."""
        account = self.account
        account.advance(self.sim.now)
        values = np.zeros(len(self.number), dtype=np.float64)
        number = self.number
        for user, used in account.usage.items():
            values[number[user]] = used
        return values

    def factor(self, usage: np.ndarray) -> np.ndarray:
        """Slurm's classic factor per user: 2^(-(usage / all usage) / share); 1 while nobody has usage."""
        total = usage.sum()
        if total <= 0:
            return np.ones_like(usage)
        return np.exp2(-(usage / total) / self.share)


class FormulaKey:
    """A formula whose values change while jobs wait, as the vectorised key of a
    :class:`~engine.policies.ordering.ReorderedQueue`: evaluated once per scheduling pass over all
    waiting jobs at once (numpy), largest-first values negated (smaller first, NaN last, ties by arrival).

    Its parts over job data only are computed beforehand for every job (:func:`precompute`) and kept
    by the queue in its slot order with the submit times and users the formula reads, so a pass
    evaluates over the queue's own arrays: no column is gathered."""

    def __init__(self, sim: Simulation, formula: Formula, largest: bool, params: Mapping[str, Any]) -> None:
        self.sim, self.largest = sim, largest
        self.tree = precompute(formula.tree, JobColumns(sim))
        self.names = formula.names
        self.usage = UserUsage(sim, params) if formula.names & {"usage", "fairshare"} else None

    def bind(self, queue: ReorderedQueue) -> None:
        slots: dict[int, np.ndarray] = {}

        def by_slot(column: np.ndarray) -> np.ndarray:
            if id(column) not in slots:
                slots[id(column)] = queue.slotted(column)
            return slots[id(column)]

        def slotted(tree: Tree) -> Tree:
            kind = tree[0]
            if kind == "pre":
                return ("pre", by_slot(tree[1])) if isinstance(tree[1], np.ndarray) else tree
            if kind in ("num", "var"):
                return tree
            if kind == "neg":
                return ("neg", slotted(tree[1]))
            if kind == "op":
                return ("op", tree[1], slotted(tree[2]), slotted(tree[3]))
            return ("call", tree[1], tuple(slotted(arg) for arg in tree[2]))

        self.tree = slotted(self.tree)
        self.submit = by_slot(np.asarray(self.sim.submit, dtype=np.float64)) if "wait" in self.names else None
        self.user = by_slot(self.usage.code) if self.usage is not None else None

    def __call__(self, queue: ReorderedQueue) -> np.ndarray:
        count, sim = queue.count, self.sim
        usage_now = factor = users = None
        if self.usage is not None and self.user is not None:
            usage_now = self.usage.usage()
            factor = self.usage.factor(usage_now)
            users = self.user[:count]

        def value_of(name: str) -> Any:
            if name == "wait":
                return sim.now - self.submit[:count]    # type: ignore[index]
            if name == "now":
                return float(sim.now)
            if name == "free":
                return float(sim.free)
            if name == "usage":
                return usage_now[users]     # type: ignore[index]
            if name == "fairshare":
                return factor[users]        # type: ignore[index]
            raise KeyError(name)

        def take(value: Column) -> Column:
            return value[:count] if isinstance(value, np.ndarray) else value

        with np.errstate(all="ignore"):
            values = np.asarray(_evaluate(self.tree, value_of, take), dtype=np.float64)
            if values.ndim == 0:
                values = np.full(count, float(values))
            return np.negative(values) if self.largest else values


# --------------------------------------------------------------------------- the ordering and its presets

FORMULA = Param("formula", "text", "submit",
                "the priority: an expression over the variables (see `python -m engine policies`), e.g. "
                "requested * procs", label="priority formula", check=check_formula)
FIRST = Param("first", "choice", "smallest", "which jobs go first: those with the smallest or the largest value",
              choices=("smallest", "largest"), label="first")
USAGE_DECAY_HOURS = Param(**{**DECAY_HOURS.__dict__, "description": DECAY_HOURS.description + " (usage, fairshare)"})
USAGE_DECAY_FACTOR = Param(**{**DECAY_FACTOR.__dict__, "description": DECAY_FACTOR.description + " (usage, fairshare)"})
PARAMS = (FORMULA, FIRST, USAGE_DECAY_HOURS, USAGE_DECAY_FACTOR)


def formula_order(sim: Simulation, params: dict) -> WaitingQueue:
    """The formula's queue: a rank per job (computed once) when it uses job data only, else a
    :class:`~engine.policies.ordering.ReorderedQueue` whose :class:`FormulaKey` is evaluated at each pass."""
    formula = parse(params.get("formula", FORMULA.default))
    largest = params.get("first", FIRST.default) == "largest"
    if formula.dynamic:
        return ReorderedQueue(sim, key=FormulaKey(sim, formula, largest, params))
    rank = ranks_of(formula.evaluate(JobColumns(sim), sim.n), largest)
    place = rank.tolist()
    return WaitingQueue(sim, lambda j: (place[j], j), rank)


def title(params: Mapping[str, Any]) -> str:
    """How labels name a formula ordering: the formula itself and which end goes first."""
    return f"{params.get('formula', FORMULA.default)} ({params.get('first', FIRST.default)} first)"


register_ordering(Component("formula", formula_order, PARAMS,
                            "your own priority formula over job and state variables", title=title,
                            titled=("formula", "first")))


TANG_2009 = ("Tang, Lan, Desai & Buettner, Fault-aware, utility-based job scheduling on Blue Gene/P systems, "
             "IEEE CLUSTER 2009")
CARASTAN_2017 = ("Carastan-Santos & de Camargo, Obtaining dynamic scheduling policies with simulation and machine "
                 "learning, SC 2017")
LELONG_2017 = "Lelong, Reis & Trystram, Tuning EASY-backfilling queues, JSSPP 2017"

#: preset name -> (formula, first, what it is, source): the literature's formulas, each with EASY
#: backfilling. F1-F4 as the SC 2017 paper writes them: r the requested (processing) time, n the
#: processors, s the submit time, the smallest value first (some public copies swap r and n in F1).
LITERATURE: dict[str, tuple[str, str, str, str]] = {
    "wfp3-easy": ("(wait / requested) ** 3 * procs", "largest",
                  "WFP3: wait over requested time, cubed, times processors; largest first", TANG_2009),
    "unicef-easy": ("wait / (log2(procs) * requested)", "largest",
                    "UNICEF: wait over log2(processors) times requested time; largest first (a 1-processor job "
                    "divides by 0: +inf once it has waited, NaN, so last, in its first second)", TANG_2009),
    "saf-easy": ("requested * procs", "smallest", "SAF: smallest area (requested time x processors) first",
                 CARASTAN_2017),
    "laf-easy": ("requested * procs", "largest", "LAF: largest area (requested time x processors) first",
                 LELONG_2017),
    "ljf-easy": ("requested", "largest", "LJF: longest requested time first (the opposite of SJF)", LELONG_2017),
    "f1-easy": ("log10(requested) * procs + 870 * log10(submit)", "smallest",
                "F1: log10(r) n + 870 log10(s), smallest first", CARASTAN_2017),
    "f2-easy": ("sqrt(requested) * procs + 25600 * log10(submit)", "smallest",
                "F2: sqrt(r) n + 25600 log10(s), smallest first", CARASTAN_2017),
    "f3-easy": ("requested * procs + 6860000 * log10(submit)", "smallest",
                "F3: r n + 6860000 log10(s), smallest first", CARASTAN_2017),
    "f4-easy": ("requested * sqrt(procs) + 530000 * log10(submit)", "smallest",
                "F4: r sqrt(n) + 530000 log10(s), smallest first", CARASTAN_2017),
}

for _name, (_formula, _first, _text, _source) in LITERATURE.items():
    parse(_formula)
    register(Preset(_name, f"{_text}, with EASY backfilling ({_source}).", "formula", "easy",
                    {"formula": _formula, "first": _first}, family="formula"))


def formula_grammar() -> dict[str, Any]:
    """What a formula may use, for `python -m engine policies` and forms: the variables with units,
    the functions, the operators, and the literature's formulas as examples to start from."""
    return {
        "variables": [v.to_dict() for v in VARIABLES.values()],
        "functions": list(FUNCTIONS),
        "operators": [symbol for symbol, _ in _OPERATORS.values()],
        "examples": [{"name": name.removesuffix("-easy"), "preset": name, "formula": formula, "first": first,
                      "description": f"{text} ({source})"}
                     for name, (formula, first, text, source) in LITERATURE.items()],
    }
