"""Create the admin account on the first start (SCHEDLAB_ADMIN_USER / SCHEDLAB_ADMIN_PASSWORD,
else a generated password printed once). Used by `make run` and the docker image."""

from __future__ import annotations

from django.core.management.base import BaseCommand

from webapp.supervision import ensure_admin


class Command(BaseCommand):
    help = "Create the first admin account if there is none, and say how to log in."

    def handle(self, *args: object, **options: object) -> None:
        self.stdout.write(ensure_admin())
