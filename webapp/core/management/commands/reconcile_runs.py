"""The lost-work check by hand: runs (a preview's too) and parses whose worker is gone or whose queued
message was lost are sent again once, then failed with the reason; leftovers of interrupted uploads removed."""

from __future__ import annotations

from django.core.management.base import BaseCommand

from webapp.experiments.tasks import reconcile, resend_lost
from webapp.traces.tasks import reconcile_traces


class Command(BaseCommand):
    help = ("Re-queue (once) or fail runs whose worker stopped sending heartbeats, and queued runs whose "
            "message was lost.")

    def handle(self, *args: object, **options: object) -> None:
        counts = reconcile()
        self.stdout.write(f"{counts['requeued']} run(s) re-queued, {counts['failed']} failed as worker lost")
        lost = resend_lost()
        self.stdout.write(f"{lost['resent']} lost run message(s) re-sent, {lost['failed']} failed")
        traces = reconcile_traces()
        self.stdout.write(f"{traces['resent']} lost parse(s) re-sent, {traces['failed']} failed; "
                          f"{traces['temporary_files_removed']} leftover upload file(s) removed")
