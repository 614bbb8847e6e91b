"""Experiments (a trace + a machine + several policies) and their runs (one simulation each)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
from django.conf import settings
from django.db import models
from django.urls import reverse

from webapp.core.files import media_path
from webapp.traces.models import Machine, Trace

#: a preview's runs (webapp.preview) are on its machine under one of its two queue configurations
CURRENT, PROPOSED = "current", "proposed"


#: A run's summary key: the deadline figures of a run a deadline-share sweep ran once (EASY, conservative),
#: derived at each share of the sweep from its one schedule ([{"value": share, <deadline figures>}];
#: webapp.experiments.tasks.deadlines_per_share)
AT_SWEEP_VALUES = "at_sweep_values"

#: The largest machine size and seed the database keeps (PositiveIntegerField and IntegerField are
#: 32-bit on PostgreSQL); forms and the API refuse more with a message, never a 500.
MAX_PROCS = 2**31 - 1
MAX_SEED = 2**31 - 1


class Experiment(models.Model):
    class Allocation(models.TextChoices):
        COUNT = "count", "count (any free processors)"
        BUDDY = "buddy", "buddy (power-of-two blocks)"

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, models.CASCADE, related_name="experiments")
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    shared = models.BooleanField(default=False, help_text="Everybody on this server may see it.")
    created = models.DateTimeField(auto_now_add=True)

    trace = models.ForeignKey(Trace, models.PROTECT, related_name="experiments")
    machine = models.ForeignKey(Machine, models.PROTECT, null=True, blank=True, related_name="experiments")
    procs = models.PositiveIntegerField("processors")
    allocation = models.CharField(max_length=10, choices=Allocation.choices, default=Allocation.COUNT)
    exact_estimates = models.BooleanField(default=False)
    seed = models.IntegerField(default=0)
    sweep_param = models.CharField(max_length=100, blank=True)
    sweep_values = models.JSONField(default=list, blank=True)
    #: only the jobs submitted in this window, "FROM:TO" in days from the first submit (the command
    #: line's --days, engine.workload.window); "" = the whole trace. Applied before the load factor.
    days = models.CharField("time window (days)", max_length=60, blank=True)
    #: the reproduce-a-paper preset it was created from (a key of webapp.experiments.reproduce.PRESETS, by
    #: the new-experiment form or the API's "paper"): its result page holds the runs against the paper's
    #: claims; "" = none
    paper = models.CharField("reproduces the paper", max_length=40, blank=True)

    class Meta:
        ordering = ["-created", "-pk"]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("experiments:detail", args=[self.pk])

    @property
    def machine_label(self) -> str:
        if self.machine_id:
            return str(self.machine)
        return f"{self.procs} processors"


class Run(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"
        CANCELLED = "cancelled"

    FINAL = (Status.DONE, Status.FAILED, Status.CANCELLED)
    OWNER_FIELD = "experiment__owner"
    SHARED_FIELD = "experiment__shared"

    experiment = models.ForeignKey(Experiment, models.CASCADE, related_name="runs")
    position = models.PositiveIntegerField(default=0)
    label = models.CharField(max_length=300)
    policy = models.JSONField()  # {"preset": ..., "params": {...}} as engine.policies.registry.resolve takes it
    sweep_value = models.JSONField(null=True, blank=True)
    #: inter-arrival times of the trace divided by this (engine.workload.load.scale_load); 1 = as recorded
    load_factor = models.FloatField(default=1.0)
    #: a preview's run: the queue configuration it runs under (current or proposed); "" = none (the
    #: recorded run, and every run of an ordinary experiment)
    queues = models.CharField(max_length=10, blank=True, choices=[(CURRENT, CURRENT), (PROPOSED, PROPOSED)])

    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED, db_index=True)
    progress = models.FloatField(default=0.0)  # fraction of jobs simulated, 0..1
    error = models.TextField(blank=True)
    task_id = models.CharField(max_length=100, blank=True)
    attempts = models.PositiveIntegerField(default=0)
    #: times its message was found lost while it was queued and sent again (webapp.core.broker.resend_lost)
    resends = models.PositiveSmallIntegerField(default=0)
    cancel_requested = models.BooleanField(default=False)
    queued_at = models.DateTimeField(auto_now_add=True)  # when it was queued, or its message last sent
    #: when the fair dispatcher (webapp.experiments.fairqueue) gave it a simulation slot and sent its
    #: message; None while it waits for its owner's turn. Kept after it ends: whose turn came last.
    dispatched_at = models.DateTimeField(null=True, blank=True, db_index=True)
    started_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    summary = models.JSONField(null=True, blank=True)  # engine.metrics.summary.summarize(), also summary.json

    class Meta:
        ordering = ["experiment", "position", "pk"]

    def __str__(self) -> str:
        return f"{self.experiment.name} / {self.label}"

    def get_absolute_url(self) -> str:
        return self.experiment.get_absolute_url() + f"#run-{self.pk}"

    @property
    def is_final(self) -> bool:
        return self.status in self.FINAL

    @property
    def result_dir(self) -> Path:
        return media_path(f"runs/{self.pk}")

    @property
    def schedule_csv(self) -> Path:
        return self.result_dir / "schedule.csv"

    def load_schedule(self) -> pd.DataFrame:
        """The engine's schedule of a finished run (columns as engine.sim.SCHEDULE_COLUMNS)."""
        return load_frame(self.result_dir / "schedule.npz")

    @property
    def rejected_csv(self) -> Path:
        """The jobs rejected at submission (engine.api.REJECTED_COLUMNS), when any was."""
        return self.result_dir / "rejected.csv"

    def load_rejected(self) -> pd.DataFrame | None:
        """The jobs rejected at submission, one row each; None when none was."""
        path = self.result_dir / "rejected.npz"
        return load_frame(path) if path.exists() else None

    def load_meta(self) -> dict:
        path = self.result_dir / "meta.json"
        return json.loads(path.read_text()) if path.exists() else {}


def save_frame(frame: pd.DataFrame, path: Path) -> None:
    """A DataFrame as .npz: one array per column plus the column order; no pickle."""
    arrays = {f"c{i}": _storable(frame[c]) for i, c in enumerate(frame.columns)}
    arrays["__columns__"] = np.array([str(c) for c in frame.columns])
    with open(path, "wb") as f:
        np.savez(f, **arrays)


def _storable(column: pd.Series) -> np.ndarray:
    """The column as an array np.load reads without pickle: text (e.g. a policy's allocation and
    pass columns) as fixed-width unicode."""
    values = column.to_numpy()
    return values.astype(str) if values.dtype == object else values


def load_frame(path: Path) -> pd.DataFrame:
    with np.load(path, allow_pickle=False) as data:
        columns = [str(c) for c in data["__columns__"]]
        return pd.DataFrame({c: data[f"c{i}"] for i, c in enumerate(columns)})


class ReplicateSet(models.Model):
    """An experiment's replicated comparison (issue 26): every policy of ``experiment`` run on many
    replicates of its trace (weekly windows, shaken copies, resampled users), combined into paired
    bootstrap intervals and verdicts (engine.api.plan_replicates / combine_replicates).

    The replicate runs are ordinary :class:`Run` rows of a hidden experiment (``runs_experiment``, one
    row per replicate, running its policies one after the other), so the fair dispatcher, the quotas,
    the lost-worker checks, cancel and re-run treat them like any run."""

    OWNER_FIELD = "experiment__owner"
    SHARED_FIELD = "experiment__shared"

    experiment = models.OneToOneField(Experiment, models.CASCADE, related_name="replicate_set")
    runs_experiment = models.OneToOneField(Experiment, models.CASCADE, related_name="replicates_of")
    #: what was asked, as the command line's --replicates ("weeks", "windows:8", "shake:10", "resample:20")
    spec = models.CharField(max_length=100)
    #: the options as chosen: {"load", "warmup", "cooldown", "without_flurries"} (for the page and a retry)
    options = models.JSONField(default=dict)
    plan = models.JSONField(default=dict)  # engine.api.plan_replicates(...)
    #: engine.api.combine_replicates(plan, outcomes), once every replicate run is done; None before
    report = models.JSONField(null=True, blank=True)
    #: one line when a replicate run failed (the set then has no report)
    error = models.TextField(blank=True)

    def __str__(self) -> str:
        return f"{self.experiment.name} / replicates {self.spec}"
