"""A study: one trace × a grid of parameters (load factor, MASC, …) × policies.

A study is an :class:`~webapp.experiments.models.Experiment` plus its grid: every point is an
ordinary experiment :class:`~webapp.experiments.models.Run`, queued, simulated, reconciled and
re-run by the experiments app, so there is one run path. :class:`StudyPoint` only records where
each run sits in the grid.
"""

from __future__ import annotations

from django.db import models
from django.urls import reverse

from webapp.experiments.models import Experiment, Run

#: The grid parameter that is not a policy parameter: the trace's load factor (Run.load_factor).
LOAD = "load"


class Study(models.Model):
    OWNER_FIELD = "experiment__owner"
    SHARED_FIELD = "experiment__shared"

    experiment = models.OneToOneField(Experiment, models.CASCADE, related_name="study")
    #: swept parameter → its values, in the order given, e.g. {"load": [0.5, 1], "masc": [5, 10, "inf"]}
    grid = models.JSONField(default=dict)
    #: the policies as given (preset + fixed parameters), before the grid is applied
    policies = models.JSONField(default=list)
    preset = models.CharField(max_length=50, blank=True, help_text="The preset study this was made from, if any.")

    class Meta:
        ordering = ["-experiment__created", "-pk"]
        verbose_name_plural = "studies"

    def __str__(self) -> str:
        return self.experiment.name

    @property
    def name(self) -> str:
        return self.experiment.name

    def get_absolute_url(self) -> str:
        return reverse("studies:detail", args=[self.pk])


class StudyPoint(models.Model):
    OWNER_FIELD = "study__experiment__owner"
    SHARED_FIELD = "study__experiment__shared"

    study = models.ForeignKey(Study, models.CASCADE, related_name="points")
    run = models.OneToOneField(Run, models.CASCADE, related_name="study_point")
    #: the policy's label before the grid is applied: one line per (policy, other coordinates) in plots
    policy_label = models.CharField(max_length=300)
    #: this point's value of every grid parameter that applies to its policy
    coords = models.JSONField(default=dict)

    class Meta:
        ordering = ["study", "run__position", "pk"]

    def __str__(self) -> str:
        return f"{self.study} / {self.run.label}"
