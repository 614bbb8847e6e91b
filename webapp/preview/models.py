"""Machine descriptions (clusters of nodes), queue configurations and reconfiguration previews.

Machine descriptions and queue configurations are small text files kept in the database (edited
in the browser). A preview is an experiment whose runs are on a machine of clusters under the
current or the proposed configuration.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models
from django.urls import reverse
from django.utils.text import slugify

from engine.api import (
    Clusters,
    Machine,
    QueueConfig,
    SiteKey,
    parse_machines,
    parse_queue_config,
    site_from_texts,
    sweep_key,
    with_change,
)
from webapp.experiments.models import CURRENT, Experiment

#: fair-share presets a preview may use, and their counterpart under the other fair-share
POLICIES = {"mrfs-easy": "fairshare-easy", "fairshare-easy": "mrfs-easy", "mrfs-fcfs": "fairshare-fcfs",
            "fairshare-fcfs": "mrfs-fcfs", "mrfs-conservative": "fairshare-conservative",
            "fairshare-conservative": "mrfs-conservative"}

#: the policy parameters a preview asks once for all its runs (the registry's: engine.policies.backfill,
#: engine.policies.fairshare) and shows on its page
PARAMS = ("backfill_bound", "decay_hours", "decay_factor")

#: the choice "inferred from the trace" (engine.platform.infer), for the current configuration and the machine
INFERRED = "inferred"
INFERRED_LABEL = "inferred from the trace"


class TextFile(models.Model):
    """A small owned text file edited in the browser; subclasses say how the engine reads it."""

    SUFFIX = ".txt"
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    shared = models.BooleanField(default=False, help_text="Everybody on this server may see and use it.")
    text = models.TextField()
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        abstract = True
        ordering = ["name", "pk"]

    def __str__(self) -> str:
        return self.name

    @property
    def file_name(self) -> str:
        return (slugify(self.name) or type(self).__name__.lower()) + self.SUFFIX


class MachineFile(TextFile):
    SUFFIX = ".machines"
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, models.CASCADE, related_name="machine_files")

    class Meta(TextFile.Meta):
        pass

    def get_absolute_url(self) -> str:
        return reverse("preview:machine_detail", args=[self.pk])

    def parsed(self) -> Machine:
        return parse_machines(self.text, source=self.file_name)


class QueueFile(TextFile):
    SUFFIX = ".yaml"
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, models.CASCADE, related_name="queue_files")

    class Meta(TextFile.Meta):
        pass

    def get_absolute_url(self) -> str:
        return reverse("preview:queues_detail", args=[self.pk])

    def parsed(self) -> QueueConfig:
        return parse_queue_config(self.text, source=self.file_name)


class OnExperiment(models.Model):
    """What a preview and a site preview share: each is one experiment's page, owned, shared and named
    through it (its ``experiment`` field)."""

    OWNER_FIELD = "experiment__owner"
    SHARED_FIELD = "experiment__shared"

    class Meta:
        abstract = True
        ordering = ["-experiment__created", "-pk"]

    def __str__(self) -> str:
        return self.experiment.name      # type: ignore[attr-defined]

    @property
    def name(self) -> str:
        return self.experiment.name      # type: ignore[attr-defined]


class Preview(OnExperiment):
    """What makes an experiment a reconfiguration preview: a machine of clusters and two queue
    configurations, current and proposed. Its runs are the experiment's ordinary runs (queued,
    simulated, cancelled, re-run and reconciled by webapp.experiments), each on the machine under the
    configuration its ``queues`` names (webapp.experiments.tasks.platform_of): one run system. The
    preview keeps copies of the texts, so editing a file later never changes what a preview shows."""

    experiment = models.OneToOneField(Experiment, models.CASCADE, related_name="preview")
    machine_name = models.CharField(max_length=200)
    machine_text = models.TextField()
    current_name = models.CharField(max_length=200)
    current_text = models.TextField()
    proposed_name = models.CharField(max_length=200)
    proposed_text = models.TextField()
    #: the fair-share preset of the current and proposed runs; the counterpart runs the other one (POLICIES)
    policy = models.CharField(max_length=60)

    def get_absolute_url(self) -> str:
        return reverse("preview:detail", args=[self.pk])

    def machine(self) -> Machine:
        return parse_machines(self.machine_text, source=self.machine_name)

    def configuration(self, queues: str) -> QueueConfig:
        """The ``current`` or ``proposed`` queue configuration."""
        name, text = (self.current_name, self.current_text) if queues == CURRENT else (self.proposed_name, self.proposed_text)
        return parse_queue_config(text, source=name)

    def platform(self, queues: str) -> Clusters:
        """A run's platform: the machine under the configuration ``queues`` names ("" = none: the recorded run)."""
        return Clusters(self.machine(), self.configuration(queues) if queues else None)


class SitePreview(OnExperiment):
    """A preview on a Slurm or PBS site's own files (issue 24 §4): the current run reads the files as
    uploaded, the proposed run an edited copy of them; both under the site's own scheduler (the
    ``slurm`` or ``pbs`` policy) on one pool of the site's CPUs. ``current`` and ``proposed`` map a
    file's name (engine.platform.sitefiles.FILES) to its text; ``proposed`` is empty until the first
    proposal is run. A sweep (the experiment's ``sweep_param``: a key's label, as ``bf_max_job_test``
    or ``long MaxTime``; ``sweep_values``: the values as the files write them) runs each side once per
    value, with the key set to it in a copy of that side's files."""


    experiment = models.OneToOneField(Experiment, models.CASCADE, related_name="site_preview")
    kind = models.CharField(max_length=10, choices=[("slurm", "Slurm"), ("pbs", "PBS")])
    current = models.JSONField(default=dict)
    proposed = models.JSONField(default=dict, blank=True)
    proposed_name = models.CharField(max_length=200, blank=True)
    #: the calibration applied to both sides (issue 24 §3): {"name": the candidate, "params": its --set
    #: policy parameters}; empty: the site as configured
    calibrated = models.JSONField(default=dict, blank=True)

    def get_absolute_url(self) -> str:
        return reverse("preview:site_detail", args=[self.pk])

    def policy(self) -> dict[str, Any]:
        """The policy every current and proposed run takes: the site's scheduler, with the applied
        calibration's parameters."""
        return {"preset": self.kind, "params": dict(self.calibrated.get("params") or {})}

    def texts(self, side: str, value: Any = None) -> dict[str, str]:
        """The ``current`` or ``proposed`` files; at a swept ``value``, with the swept key set to it."""
        texts = dict(self.current if side == CURRENT else self.proposed)
        key = self.swept_key() if value is not None else None
        return with_change(texts, key, str(value)) if key is not None else texts

    def swept_key(self) -> SiteKey | None:
        """The key the sweep sets (None without a sweep), found by its label in the current files."""
        label = self.experiment.sweep_param
        return sweep_key(self.site(CURRENT), label) if label else None

    def site(self, side: str, value: Any = None) -> Any:
        """The SlurmSite or PbsServer of the ``current`` or ``proposed`` files (at a swept ``value``)
        (WorkloadError if they do not read; they were checked when stored). Each distinct set of texts
        is read once per instance (a page, a download or a swept run asks for the same files several
        times); the cache is keyed by the texts themselves, so a changed proposal is read afresh."""
        texts = self.texts(side, value)
        read: dict[tuple[tuple[str, str], ...], Any] = self.__dict__.setdefault("_read_sites", {})
        key = tuple(sorted(texts.items()))
        if key not in read:
            read[key] = site_from_texts(self.kind, texts)
        return read[key]


class SiteCalibration(models.Model):
    """The calibration of a Slurm site preview's baseline (engine.api.calibrate_site on its trace and
    current files), run in the background (webapp.preview.tasks.calibrate_site_preview) with progress;
    ``report`` is the engine's JSON report once done, ``error`` one line when it failed. One per site
    preview: asking again replaces it. It waits for its owner's turn in the server's fair queue of
    runs (webapp.experiments.fairqueue; ``dispatched_at``: sent to the simulation queue) and can be
    cancelled (``cancel_requested``: a running one stops at its next progress check)."""

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"
        CANCELLED = "cancelled"

    site_preview = models.OneToOneField(SitePreview, models.CASCADE, related_name="calibration")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    progress = models.FloatField(default=0.0)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    error = models.TextField(blank=True)
    report = models.JSONField(null=True, blank=True)
    created = models.DateTimeField(auto_now_add=True)
    dispatched_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    cancel_requested = models.BooleanField(default=False)
    finished_at = models.DateTimeField(null=True, blank=True)

    @property
    def is_final(self) -> bool:
        return self.status in (self.Status.DONE, self.Status.FAILED, self.Status.CANCELLED)

    @property
    def shown_status(self) -> str:
        """The status as the page words it: "waiting for its turn" (queued), "cancelling" (asked to stop)."""
        if self.cancel_requested and not self.is_final:
            return "cancelling"
        return "waiting for its turn" if self.status == self.Status.QUEUED else str(self.status)
