"""The metrics table: one row per metric, one column per policy."""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping
from functools import partial
from typing import NamedTuple

import numpy as np
from bokeh.layouts import column
from bokeh.models import (
    ColumnDataSource,
    DataTable,
    HTMLTemplateFormatter,
    LayoutDOM,
    TableColumn,
)

from engine.api import DURATION_UNITS, metric, metric_text

from .style import note


class MetricRow(NamedTuple):
    key: str                              # key in engine.metrics.summary.summarize()'s dict
    label: str                            # its name in words (engine.metrics.units)
    fmt: Callable[[float], str]
    lower_is_better: bool
    kind: str = "number"                  # duration, percent, count or number (engine.metrics.units)
    unit: str = ""                        # a number's unit ("ms"), shown once in the row's heading
    digits: int = 0


def metric_row(code: str) -> MetricRow:
    """The row of summary metric ``code``: its name, format and direction from engine.metrics.units."""
    known = metric(code)
    return MetricRow(code, known.label, partial(metric_text, code), known.lower_is_better, known.kind, known.unit,
                     known.digits)


METRIC_ROWS: tuple[MetricRow, ...] = tuple(metric_row(code) for code in (
    "mean_wait", "p95_wait", "mean_bsld", "utilization", "makespan", "weighted_turnaround", "mean_abs_skip",
    "jain_bsld"))

#: Rows shown only when some policy's summary has them (figures a policy family adds).
OPTIONAL_ROWS: tuple[MetricRow, ...] = (metric_row("mean_decision_ms"), metric_row("max_decision_ms"))


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


def row_unit(row: MetricRow, values: list[float]) -> tuple[str, float, int | None]:
    """(unit, divisor, decimals) for one row: durations in the unit engine.metrics.units gives the row's
    largest value (days, h, min, s), percentages in %; other rows (None decimals) are written by the
    row's own format."""
    if row.kind == "duration":
        largest = max((abs(v) for v in values if np.isfinite(v)), default=0.0)
        for unit, size, shown_from in DURATION_UNITS:
            if largest >= shown_from:
                return unit, size, 0 if unit == "s" else 2
    if row.kind == "percent":
        return "%", 0.01, 1
    if row.kind == "number" and row.unit:
        return row.unit, 1.0, row.digits
    return "", 1.0, None


def change(value: float, base: float, lower_is_better: bool) -> tuple[str, str]:
    """(text, "better" | "worse" | "same") of ``value`` against the baseline's ``base``."""
    if not (np.isfinite(value) and np.isfinite(base)):
        return "", "same"
    if value == base:
        return "±0", "same"
    better = (value < base) == lower_is_better
    if base != 0:
        text = f"{100 * (value - base) / abs(base):+,.1f} %".replace("-", "−")
    else:
        text = f"{value - base:+,.3g}".replace("-", "−")
    return text, "better" if better else "worse"


def metrics_table_html(summaries: Mapping[str, Mapping[str, float]], *, baseline: str | None = None,
                       colours: Mapping[str, str] | None = None, unusable: Mapping[str, str] | None = None,
                       intervals: Mapping[tuple[str, str], str] | None = None, interval_note: str = "") -> str:
    """The metrics as an HTML table: a sticky first column of metrics with their unit, one column per
    run (a colour mark matching the plots), each value with its change against the ``baseline`` run
    and, from replicates, that change's confidence interval (``intervals[(label, metric)]``, with
    ``interval_note`` saying where they come from). ``unusable``: runs that cannot be a baseline (an
    impossible schedule) → why; never the baseline, their heading says why; with no usable run there
    are no changes."""
    labels = list(summaries)
    unusable = unusable or {}
    usable = [label for label in labels if label not in unusable]
    baseline = baseline if baseline in usable else (usable[0] if usable else None)
    colours = colours or {}
    head = ["<th class='metric'>metric (unit)</th>"]
    for label in labels:
        mark = f"<span class='swatch' style='background:{escape(colours.get(label, '#888'))}'></span>"
        tag = ("<br><small>baseline</small>" if label == baseline else
               f"<br><small class='unusable' title='{escape(unusable[label])}'>not a baseline: "
               f"{escape(unusable[label])}</small>" if label in unusable else "")
        head.append(f"<th scope='col' data-run='{escape(label)}'>{mark}{escape(label)}{tag}</th>")
    body = []
    for row in rows_for(summaries):
        values = {label: _as_float(summary.get(row.key)) for label, summary in summaries.items()}
        unit, divisor, digits = row_unit(row, list(values.values()))
        name = f"{row.label} ({unit})" if unit else row.label
        cells = [f"<th scope='row' class='metric'>{escape(name)}</th>"]
        base = values.get(baseline, float("nan")) if baseline else float("nan")
        for label, value in values.items():
            if not np.isfinite(value):
                shown = "–"
            else:
                shown = row.fmt(value) if digits is None else f"{value / divisor:,.{digits}f}"
            delta, kind = ("", "same") if label == baseline else change(value, base, row.lower_is_better)
            interval = (intervals or {}).get((label, row.key), "") if label != baseline and np.isfinite(value) else ""
            cells.append(f"<td class='num'>{shown}" + (f" <span class='delta {kind}'>{delta}</span>" if delta else "")
                         + (f"<br><small class='ci' data-ci='{escape(row.key)}'>{escape(interval)}</small>"
                            if interval else "") + "</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    legend = ("<p class='metrics-note'>Change against the baseline: <span class='delta better'>better</span> / "
              "<span class='delta worse'>worse</span> (lower is better except utilization and Jain index)."
              + (f" {escape(interval_note)}" if intervals else "") + "</p>"
              if baseline else "<p class='metrics-note'>No run here can be a baseline, so no changes are shown.</p>")
    return ("<div class='metrics-scroll'><table class='metrics-table'><thead><tr>" + "".join(head)
            + "</tr></thead><tbody>" + "".join(body) + "</tbody></table></div>" + legend)


def escape(text: object) -> str:
    return html.escape(str(text), quote=True)
