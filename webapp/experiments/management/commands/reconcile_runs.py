"""Find runs marked running whose worker is gone: re-queue them once, then fail them."""

from __future__ import annotations

from django.core.management.base import BaseCommand

from webapp.experiments.tasks import reconcile


class Command(BaseCommand):
    help = "Re-queue (once) or fail runs whose worker stopped sending heartbeats."

    def handle(self, *args: object, **options: object) -> None:
        counts = reconcile()
        self.stdout.write(f"{counts['requeued']} run(s) re-queued, {counts['failed']} failed as worker lost")
