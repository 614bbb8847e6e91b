"""The metrics table: one row per metric, one column per policy."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import NamedTuple

import numpy as np
from bokeh.models import ColumnDataSource, DataTable, HTMLTemplateFormatter, TableColumn
from bokeh.layouts import column
from bokeh.models import LayoutDOM

from .style import format_seconds, note


class MetricRow(NamedTuple):
    key: str                              # key in engine.metrics.summary.summarize()'s dict
    label: str
    fmt: Callable[[float], str]
    lower_is_better: bool


def _number(digits: int) -> Callable[[float], str]:
    return lambda v: f"{v:,.{digits}f}"


def _percent(v: float) -> str:
    return f"{100 * v:.1f} %"


METRIC_ROWS: tuple[MetricRow, ...] = (
    MetricRow("mean_wait", "mean wait", format_seconds, True),
    MetricRow("p95_wait", "95th percentile wait", format_seconds, True),
    MetricRow("mean_bsld", "mean bounded slowdown (τ = 10 s)", _number(2), True),
    MetricRow("utilization", "utilization", _percent, False),
    MetricRow("makespan", "makespan", format_seconds, True),
    MetricRow("weighted_turnaround", "size-weighted turnaround", format_seconds, True),
    MetricRow("mean_abs_skip", "mean |skipping count|", _number(1), True),
    MetricRow("jain_bsld", "Jain index (users' bounded slowdown)", _number(3), False),
)

#: Rows shown only when some policy's summary has them (figures a policy family adds).
OPTIONAL_ROWS: tuple[MetricRow, ...] = (
    MetricRow("mean_decision_ms", "mean decision time (ms)", _number(1), True),
    MetricRow("max_decision_ms", "max decision time (ms)", _number(0), True),
)


def rows_for(summaries: Mapping[str, Mapping[str, float]]) -> tuple[MetricRow, ...]:
    """METRIC_ROWS, then the optional rows at least one summary has a value for."""
    present = tuple(row for row in OPTIONAL_ROWS
                    if any(summary.get(row.key) is not None for summary in summaries.values()))
    return METRIC_ROWS + present


def metrics_rows(summaries: Mapping[str, Mapping[str, float]]) -> dict[str, list[str]]:
    """Formatted table columns: "metric" then one list of strings per policy label.

    A metric a summary lacks shows as "–"; the best value in each row is wrapped in <b>.
    """
    rows = rows_for(summaries)
    table: dict[str, list[str]] = {"metric": [row.label for row in rows]}
    for label in summaries:
        table[label] = []
    for row in rows:
        values = {label: _as_float(summary.get(row.key)) for label, summary in summaries.items()}
        finite = [v for v in values.values() if np.isfinite(v)]
        best = (min(finite) if row.lower_is_better else max(finite)) if len(finite) > 1 else None
        for label, value in values.items():
            text = row.fmt(value) if np.isfinite(value) else "–"
            table[label].append(f"<b>{text}</b>" if best is not None and value == best else text)
    return table


def _as_float(value: object) -> float:
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return float("nan")


def metrics_table(summaries: Mapping[str, Mapping[str, float]], *, width: int = 900) -> LayoutDOM:
    """A DataTable with one column per policy; the best value of each row is bold."""
    table = metrics_rows(summaries)
    bold = HTMLTemplateFormatter(template="<%= value %>")
    policy_width = max(90, (width - 280) // max(1, len(summaries)))
    columns = [TableColumn(field="metric", title="metric", width=280)]
    columns += [TableColumn(field=label, title=label, width=policy_width, formatter=bold) for label in summaries]
    data = DataTable(source=ColumnDataSource(table), columns=columns, width=width,
                     height=30 + 26 * len(table["metric"]), index_position=None, sortable=False)
    return column(data, note("The best value of each row is in bold.", width=width))
