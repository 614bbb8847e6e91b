"""Previews of the old, separate run system become experiments (preview migration 0006): same ids and
texts, one cancelled run per old simulation with the reason, the old result folder gone."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.webapp.conftest import ONE_CLUSTER, ONE_QUEUE


@pytest.mark.django_db(transaction=True)
def test_an_old_preview_becomes_an_experiment_whose_runs_are_re_run_from_its_page(alice, demo_trace, settings):
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    from webapp.preview.models import Preview

    before = [("preview", "0004_preview_params"), ("experiments", "0006_replicate_set")]
    executor = MigrationExecutor(connection)
    executor.migrate(before)
    try:
        old = executor.loader.project_state(before).apps.get_model("preview", "Preview")
        done = old.objects.create(owner_id=alice.pk, name="old done", shared=True, trace_id=demo_trace.pk,
                                  machine_name="m", machine_text=ONE_CLUSTER, current_name="a", current_text=ONE_QUEUE,
                                  proposed_name="b", proposed_text=ONE_QUEUE, policy="mrfs-easy",
                                  params={"backfill_bound": 3}, status="done", summary={"recorded": {"jobs": 30}})
        queued = old.objects.create(owner_id=alice.pk, name="old queued", trace_id=demo_trace.pk, machine_name="m",
                                    machine_text=ONE_CLUSTER, current_name="a", current_text=ONE_QUEUE,
                                    proposed_name="b", proposed_text=ONE_QUEUE, policy="fairshare-easy")
        folder = Path(settings.MEDIA_ROOT) / "previews" / str(done.pk)
        folder.mkdir(parents=True)
        (folder / "current.npz").write_bytes(b"old")

        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())
        first, second = Preview.objects.get(pk=done.pk), Preview.objects.get(pk=queued.pk)
        assert (first.name, first.experiment.shared, first.experiment.owner, first.experiment.procs) == (
            "old done", True, alice, 1600)
        assert (first.current_text, first.proposed_name, first.policy) == (ONE_QUEUE, "b", "mrfs-easy")
        runs = [(r.label, r.queues, r.policy, r.status) for r in first.experiment.runs.all()]
        assert runs == [("recorded", "", {"preset": "recorded", "params": {}}, "cancelled"),
                        ("current: mrfs-easy", "current", {"preset": "mrfs-easy", "params": {"backfill_bound": 3}},
                         "cancelled"),
                        ("proposed: mrfs-easy", "proposed", {"preset": "mrfs-easy", "params": {"backfill_bound": 3}},
                         "cancelled"),
                        ("proposed: fairshare-easy", "proposed",
                         {"preset": "fairshare-easy", "params": {"backfill_bound": 3}}, "cancelled")]
        assert all("re-run it" in r.error for r in first.experiment.runs.all())
        assert [r.label for r in second.experiment.runs.all()] == [
            "current: fairshare-easy", "proposed: fairshare-easy", "proposed: mrfs-easy"]
        assert not folder.exists()
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())
