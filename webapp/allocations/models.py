"""Allocations files (who may use how much of the machine: SFS targets) and which experiment used one.

The file's text is kept in the database: allocations files are a few lines, and editing them in the
browser is the common case. An experiment keeps a copy of the text it was started with, so editing
the file later never changes what its runs (or re-runs) simulated, nor the targets its dashboard
draws.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.urls import reverse
from django.utils.text import slugify

from engine.api import Allocations, parse_allocations


class AllocationSet(models.Model):
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, models.CASCADE, related_name="allocation_sets")
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    shared = models.BooleanField(default=False, help_text="Everybody on this server may see and use it.")
    text = models.TextField(help_text="CSV: allocation,members,award,period_days,target_factor,target")
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name", "pk"]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("allocations:detail", args=[self.pk])

    @property
    def file_name(self) -> str:
        return (slugify(self.name) or "allocations") + ".csv"

    def parsed(self) -> Allocations:
        return parse_allocations(self.text, source=self.file_name)


class ExperimentAllocations(models.Model):
    """The allocations an experiment's runs were given (a copy of the file's text at creation)."""

    OWNER_FIELD = "experiment__owner"
    SHARED_FIELD = "experiment__shared"

    experiment = models.OneToOneField("experiments.Experiment", models.CASCADE, related_name="allocations_used")
    allocation_set = models.ForeignKey(AllocationSet, models.PROTECT, related_name="experiments_using")
    text = models.TextField()
    file_name = models.CharField(max_length=250)

    def parsed(self) -> Allocations:
        return parse_allocations(self.text, source=self.file_name)
