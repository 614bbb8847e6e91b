"""Editing a preview's proposed queue configuration in its page: a row per queue (walltime in hours or
days, cores, per-user jobs and cores, pool as cluster checkboxes, priority) and the YAML beside it.
Both edit the same proposal: the YAML wins when it was edited (it says everything, the rows only the
common limits); otherwise the rows are applied to the proposal and the YAML is written from them.
The difference from the current configuration is listed limit by limit, in hours and days."""

from __future__ import annotations

import difflib
from dataclasses import dataclass, replace
from typing import Any

from django import forms

from engine.api import QueueConfig, WorkloadError, check_pools, config_yaml, error_line, parse_queue_config, walltime_text

HOUR, DAY = 3600, 86_400
UNITS = [("h", "hours"), ("d", "days")]
#: the limits a row edits besides the walltime, and their labels
COUNTS = {"max_cores": "cores", "user_max_jobs": "jobs per user", "user_max_cores": "cores per user"}
ALL_CLUSTERS = "all clusters"


def pool_words(pool: tuple[str, ...] | None) -> str:
    return ALL_CLUSTERS if not pool else ", ".join(pool)


def walltime_field_values(seconds: int) -> tuple[float, str]:
    """The (number, unit) a row shows for a walltime: days when whole days, else hours."""
    return (seconds // DAY, "d") if seconds % DAY == 0 else (round(seconds / HOUR, 4), "h")


class ProposalForm(forms.Form):
    """The rows and the YAML of one proposal (``base``, the proposal as the page showed it) on a
    machine whose clusters are ``clusters``."""

    name = forms.CharField(max_length=190, label="Name of the proposal")
    yaml = forms.CharField(widget=forms.Textarea(attrs={"rows": 24, "class": "mono", "spellcheck": "false"}),
                           label="YAML (for experts: every key; it wins when edited)")
    yaml_base = forms.CharField(widget=forms.HiddenInput)

    def __init__(self, *args: Any, base: QueueConfig, base_text: str, clusters: list[str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.base, self.clusters = base, clusters
        self.fields["yaml"].initial = self.fields["yaml_base"].initial = base_text
        for i, queue in enumerate(base.queues):
            number, unit = walltime_field_values(queue.walltime)
            self.fields[f"q{i}_walltime"] = forms.FloatField(min_value=0.001, initial=number, label="walltime",
                                                             widget=forms.NumberInput(attrs={"step": "any"}))
            self.fields[f"q{i}_unit"] = forms.ChoiceField(choices=UNITS, initial=unit, label="unit")
            for key, label in COUNTS.items():
                self.fields[f"q{i}_{key}"] = forms.IntegerField(min_value=1, required=False, initial=getattr(queue, key),
                                                                label=label)
            self.fields[f"q{i}_pool"] = forms.MultipleChoiceField(
                choices=[(c, c) for c in clusters], required=False, widget=forms.CheckboxSelectMultiple,
                initial=list(queue.pool) if queue.pool else list(clusters), label="pool")
            self.fields[f"q{i}_priority"] = forms.IntegerField(initial=queue.priority, label="priority")

    def rows(self) -> list[dict[str, Any]]:
        """For the template: each queue's name and bound fields."""
        return [{"name": queue.name, "walltime": self[f"q{i}_walltime"], "unit": self[f"q{i}_unit"],
                 "counts": [self[f"q{i}_{key}"] for key in COUNTS], "pool": self[f"q{i}_pool"],
                 "priority": self[f"q{i}_priority"]} for i, queue in enumerate(self.base.queues)]

    def yaml_edited(self) -> bool:
        data = self.cleaned_data
        return _lines(data.get("yaml", "")) != _lines(data.get("yaml_base", ""))

    def clean(self) -> dict[str, Any]:
        """The proposal (``config``) and its YAML (``text``), from the YAML if it was edited, else the rows."""
        data = super().clean()
        if "yaml" not in data or "yaml_base" not in data:
            return data
        source = data.get("name") or "proposal"
        try:
            if self.yaml_edited():
                text = data["yaml"].replace("\r\n", "\n").rstrip() + "\n"   # browsers post CRLF
                config = parse_queue_config(text, source=source)
            else:
                config = self._from_rows(data)
                text = config_yaml(config)
            check_pools(config, self.clusters)
        except WorkloadError as error:
            self.add_error("yaml" if self.yaml_edited() else None, error_line(error))
            return data
        data["config"], data["text"] = config, text
        return data

    def _from_rows(self, data: dict[str, Any]) -> QueueConfig:
        queues = []
        for i, queue in enumerate(self.base.queues):
            number, unit = data.get(f"q{i}_walltime"), data.get(f"q{i}_unit")
            if number is None or unit is None:
                raise WorkloadError("give a walltime", field=f"{queue.name} walltime")
            pool = data.get(f"q{i}_pool") or []
            if not pool:
                raise WorkloadError("tick at least one cluster", field=f"{queue.name} pool")
            priority = data.get(f"q{i}_priority")
            queues.append(replace(
                queue, walltime=max(1, round(number * (DAY if unit == "d" else HOUR))),
                priority=queue.priority if priority is None else priority,
                pool=queue.pool if set(pool) == set(queue.pool or self.clusters)   # as it was: unchanged
                else None if set(pool) == set(self.clusters) else tuple(c for c in self.clusters if c in pool),
                **{key: data.get(f"q{i}_{key}") for key in COUNTS}))
        return replace(self.base, queues=tuple(queues))

    def field_values(self) -> dict[str, Any]:
        """Every row field's value for the proposal now (the page's script sets them after a YAML edit)."""
        config = self.cleaned_data["config"]
        values: dict[str, Any] = {}
        for i, queue in enumerate(config.queues[:len(self.base.queues)]):
            number, unit = walltime_field_values(queue.walltime)
            values.update({f"q{i}_walltime": number, f"q{i}_unit": unit, f"q{i}_priority": queue.priority,
                           f"q{i}_pool": list(queue.pool) if queue.pool else list(self.clusters),
                           **{f"q{i}_{key}": getattr(queue, key) for key in COUNTS}})
        return values


def _lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.strip().splitlines()]


@dataclass(frozen=True)
class Change:
    """One limit of one queue that differs between the current and the proposed configuration."""

    queue: str
    limit: str
    current: str
    proposed: str


def differences(current: QueueConfig, proposed: QueueConfig) -> list[Change]:
    """Limit by limit, in the proposed order (then the queues it drops): what the proposal changes."""
    changes = []
    if current.mode != proposed.mode:
        changes.append(Change("(all)", "mode", current.mode, proposed.mode))
    before = {q.name: q for q in current.queues}
    after = {q.name: q for q in proposed.queues}
    for queue in proposed.queues:
        old = before.get(queue.name)
        if old is None:
            changes.append(Change(queue.name, "queue", "—", f"new, walltime {walltime_text(queue.walltime)}"))
            continue
        changes += [Change(queue.name, label, a, b) for label, a, b in _limits(old, queue) if a != b]
    changes += [Change(name, "queue", f"walltime {walltime_text(q.walltime)}", "removed")
                for name, q in before.items() if name not in after]
    return changes


def _limits(old: Any, new: Any) -> list[tuple[str, str, str]]:
    def count(value: Any) -> str:
        return "no limit" if value is None else str(value)

    return [("walltime", walltime_text(old.walltime), walltime_text(new.walltime)),
            ("priority", str(old.priority), str(new.priority)),
            *[(label, count(getattr(old, key)), count(getattr(new, key))) for key, label in COUNTS.items()],
            ("share of the machine", count(old.max_share), count(new.max_share)),
            ("pool", pool_words(old.pool), pool_words(new.pool)),
            ("single node", "yes" if old.single_node else "no", "yes" if new.single_node else "no")]


def yaml_diff(current: QueueConfig, proposed: QueueConfig) -> str:
    """A unified diff of the two configurations as YAML written the same way (comments and key order
    of the texts left out, so only what the engine reads differs)."""
    return "".join(difflib.unified_diff(config_yaml(current).splitlines(keepends=True),
                                        config_yaml(proposed).splitlines(keepends=True),
                                        fromfile="current", tofile="proposed", n=1))
