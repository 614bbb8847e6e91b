"""Machine descriptions (clusters of nodes), queue configurations and reconfiguration previews.

Machine descriptions and queue configurations are small text files kept in the database (edited
in the browser). A preview keeps copies of the texts it was started with, so editing a file later
never changes what a finished preview shows.
"""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.db import models
from django.urls import reverse
from django.utils import timezone
from django.utils.text import slugify

from engine.api import Machine, QueueConfig, parse_machines, parse_queue_config
from webapp.core.files import media_path
from webapp.traces.models import Trace

#: fair-share presets a preview may use, and their counterpart under the other fair-share
POLICIES = {"mrfs-easy": "fairshare-easy", "fairshare-easy": "mrfs-easy", "mrfs-fcfs": "fairshare-fcfs",
            "fairshare-fcfs": "mrfs-fcfs", "mrfs-conservative": "fairshare-conservative",
            "fairshare-conservative": "mrfs-conservative"}

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


class Preview(models.Model):
    """A trace on a machine under a policy, with the current and the proposed queue configuration."""

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, models.CASCADE, related_name="previews")
    name = models.CharField(max_length=200)
    shared = models.BooleanField(default=False, help_text="Everybody on this server may see it.")
    trace = models.ForeignKey(Trace, models.PROTECT, related_name="previews")
    machine_name = models.CharField(max_length=200)
    machine_text = models.TextField()
    current_name = models.CharField(max_length=200)
    current_text = models.TextField()
    proposed_name = models.CharField(max_length=200)
    proposed_text = models.TextField()
    policy = models.CharField(max_length=60)
    #: the policy's parameters, the same for every run (e.g. {"backfill_bound": 100}); empty: the defaults
    params = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    error = models.TextField(blank=True)
    summary = models.JSONField(null=True, blank=True)
    created = models.DateTimeField(auto_now_add=True)
    finished = models.DateTimeField(null=True, blank=True)
    queued_at = models.DateTimeField(default=timezone.now)  # when its message was last sent
    #: times it was sent again: its message was lost while queued, or its worker died while running
    resends = models.PositiveSmallIntegerField(default=0)
    started = models.DateTimeField(null=True, blank=True)
    #: the worker's lease: renewed every few seconds while it computes (webapp.core.progress); a stale
    #: one means the worker is gone (webapp.preview.tasks.reconcile_previews)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    progress = models.FloatField(default=0.0)  # share of its simulations done, 0..1

    class Meta:
        ordering = ["-created", "-pk"]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("preview:detail", args=[self.pk])

    @property
    def result_dir(self) -> Path:
        return media_path(f"previews/{self.pk}")
