"""Uploaded workload traces and machine descriptions."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.db import models
from django.urls import reverse

from engine.api import (WorkloadError, WALL_CLOCK_FORMATS, Cleaning, Workload, error_line, load_parsed,
                        parse_machines, parsed_without_recorded_starts, read_trace, read_trace_header, save_parsed,
                        trace_time_zone)
from webapp.core.files import media_path
from webapp.core.time_axis import TimeAxis, time_axis

#: Header keys that say when a trace's time 0 is and in which zone.
CALENDAR_KEYS = ("UnixStartTime", "TimeZoneString", "TimeZone", "TimeBase")


#: What a run of a removed trace, and the pages of experiments that used it, say.
REMOVED_MESSAGE = ("the trace was removed by its owner: the results computed from it stay, "
                   "but nothing can be computed from it any more")


class Machine(models.Model):
    """A machine to simulate on. For now a name and a processor count (cluster files come later)."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, models.CASCADE, related_name="machines")
    name = models.CharField(max_length=200)
    procs = models.PositiveIntegerField("processors")
    shared = models.BooleanField(default=False, help_text="Everybody on this server may use it.")
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name", "pk"]

    def __str__(self) -> str:
        return f"{self.name} ({self.procs} processors)"


class Trace(models.Model):
    class Status(models.TextChoices):
        PARSING = "parsing"
        READY = "ready"
        INVALID = "invalid"
        #: deleted by its owner while experiments used it: the row stays for them (name, summary),
        #: the file and caches are gone, nobody else sees it (webapp.traces.services.remove_trace)
        REMOVED = "removed"

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, models.CASCADE, related_name="traces")
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    shared = models.BooleanField(default=False, help_text="Everybody on this server may see and use it.")
    created = models.DateTimeField(auto_now_add=True)

    # The file, stored by content hash: MEDIA_ROOT/traces/<sha256>.swf[.gz].
    sha256 = models.CharField(max_length=64, db_index=True)
    file = models.CharField(max_length=200)
    original_name = models.CharField(max_length=255, blank=True)  # shown, never used as a path
    size_bytes = models.BigIntegerField(default=0)
    format = models.CharField(max_length=20, default="swf")
    # Machine size the jobs are cleaned against: given at upload, else the machine description's, else the header's.
    procs = models.PositiveIntegerField(null=True, blank=True)
    # The machine description uploaded with the trace (an AleaNG .machines file, CSV or YAML): its file
    # name and text; empty when none was (the page then names only the hosts its jobs ran on).
    machine_name = models.CharField(max_length=255, blank=True)
    machine_text = models.TextField(blank=True)

    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PARSING)
    error = models.TextField(blank=True)
    header = models.JSONField(default=dict, blank=True)
    # The zone its dates are shown in: chosen at upload, else the log's own (read when it is parsed).
    time_zone = models.CharField(max_length=64, blank=True,
                                 help_text="IANA name (Europe/Prague) or offset (UTC+01:00); empty: the log's own.")
    summary = models.JSONField(null=True, blank=True)  # engine.workload.describe()
    cache = models.CharField(max_length=200, blank=True)  # columnar cache, relative to MEDIA_ROOT
    parse_seconds = models.FloatField(null=True, blank=True)
    # The lost-parse check (webapp.traces.tasks.reconcile_parsing): when the parse was last sent and
    # taken by a worker, and how many times it was sent again (once, then the trace fails).
    parse_sent_at = models.DateTimeField(null=True, blank=True)
    parse_started_at = models.DateTimeField(null=True, blank=True)
    parse_resends = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["-created", "-pk"]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("traces:detail", args=[self.pk])

    @property
    def path(self) -> Path:
        return media_path(self.file)

    @property
    def cache_path(self) -> Path | None:
        return media_path(self.cache) if self.cache else None

    @property
    def download_name(self) -> str:
        suffix = ".swf.gz" if self.file.endswith(".gz") else ".swf"
        stem = "".join(c if c.isalnum() or c in "-_." else "_" for c in self.name)[:80] or "trace"
        return stem + suffix

    @property
    def is_ready(self) -> bool:
        return self.status == self.Status.READY

    @property
    def report(self) -> dict:
        return (self.summary or {}).get("cleaning") or (self.summary or {}).get("report") or {}

    def cache_path_for(self, procs: int) -> Path:
        return media_path(f"traces/{self.sha256}-p{procs}.npz")

    def read(self) -> Workload:
        """Parse the stored file (machine size and memory unit as uploaded) and write its columnar cache."""
        if self.status == Trace.Status.REMOVED:
            raise WorkloadError(REMOVED_MESSAGE, file=self.name)
        workload = read_trace(self.path, procs=self.procs, cleaning=self.cleaning())
        target = self.cache_path_for(int(workload.metadata["procs"]))
        target.parent.mkdir(parents=True, exist_ok=True)
        save_parsed(workload, target)
        return workload

    def cleaning(self) -> Cleaning:
        """How the file is read: the options chosen at upload (services.upload_options)."""
        header = self.header or {}
        return Cleaning(memory_unit=header.get("memory_unit"), skip_bad_lines=header.get("skip_bad_lines") == "yes")

    def workload(self) -> Workload:
        """The parsed trace from its columnar cache; parsed again (and cached) if the cache was lost
        or written before the readers kept the recorded starts (so its recorded run appears too)."""
        path = self.cache_path
        if path is not None and path.exists():
            workload = load_parsed(path)
            if not parsed_without_recorded_starts(workload):
                return workload
        return self.read()

    def machine_description(self) -> dict | None:
        """The machine description uploaded with the trace, as its page names it: file name, clusters
        (nodes x cores per node) and total cores; ``error`` when its text no longer reads; None without one."""
        if not self.machine_text:
            return None
        try:
            machine = parse_machines(self.machine_text, source=self.machine_name or "machine description")
        except WorkloadError as problem:
            return {"name": self.machine_name, "error": error_line(problem)}
        return {"name": self.machine_name, "cores": machine.cores,
                "clusters": [{"name": c.name, "nodes": c.nodes, "cores": c.cores} for c in machine.clusters]}

    def zone(self) -> str:
        """The zone its dates are shown in; a trace parsed before zones were stored gets the log's
        own now (read from its parsed form, once)."""
        if not self.time_zone and self.is_ready:
            self.time_zone = trace_time_zone(self.workload())[1]
            Trace.objects.filter(pk=self.pk, time_zone="").update(time_zone=self.time_zone)
        return self.time_zone

    def calendar_header(self) -> dict:
        """The header as stored at upload, or read from the file's ';' lines when that lacks the
        calendar keys (traces stored another way, e.g. a local import)."""
        header = dict(self.header or {})
        if any(key in header for key in CALENDAR_KEYS):
            return header
        try:
            return {**read_trace_header(self.path), **header}
        except (OSError, ValueError):
            return header

    def time_axis(self, first_submit: float | None = None) -> TimeAxis:
        """The trace's calendar (its header's start time and zone, or epoch submits), else time since
        its start; ``first_submit``: the schedules' first, else the parsed trace's."""
        if first_submit is None:
            first_submit = (self.summary or {}).get("first_submit")
        return time_axis(self.calendar_header(), first_submit, zone=self.zone(),
                         wall_clock=self.format in WALL_CLOCK_FORMATS)

    def day_zero(self) -> str:
        """Day 0 of a time window (days from the first submit) as a date in the trace's zone, e.g.
        "1996-09-23 10:15 (Europe/Stockholm)"; "" when the trace has no calendar or is not parsed."""
        first = (self.summary or {}).get("first_submit")
        axis = self.time_axis(first) if first is not None else None
        if axis is None or not axis.calendar:
            return ""
        return f"{axis.text(first)} ({axis.tz})"

    def delete_files(self) -> None:
        """Remove the stored file and caches unless another trace shares the same content."""
        if Trace.objects.filter(sha256=self.sha256).exclude(pk=self.pk).exclude(status=Trace.Status.REMOVED).exists():
            return
        self.path.unlink(missing_ok=True)
        for cache in self.path.parent.glob(f"{self.sha256}-p*.npz"):
            cache.unlink(missing_ok=True)
