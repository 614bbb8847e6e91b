"""Each preview of the old, separate run system becomes an experiment with one run per simulation.

The old results are not carried over: those previews ran with the proposed walltimes and limits
ignored (issue 23: a shorter walltime changed nothing, a tight limit failed the run), so their numbers
would mislead. Each run is kept cancelled with a message saying so; "re-run" computes it under the
engine of today. The old result folders (MEDIA_ROOT/previews/<id>) are removed.
"""

import shutil
from pathlib import Path

from django.conf import settings
from django.db import migrations

NOT_CARRIED = ("made before previews were experiments, by a preview that ignored the proposed walltimes and "
               "limits: re-run it to compute it as the scheduler would")
#: the old preview's runs: (queue configuration, whether it runs the counterpart fair-share)
SIDES = (("current", False), ("proposed", False), ("proposed", True))
COUNTERPARTS = {"mrfs-easy": "fairshare-easy", "fairshare-easy": "mrfs-easy", "mrfs-fcfs": "fairshare-fcfs",
                "fairshare-fcfs": "mrfs-fcfs", "mrfs-conservative": "fairshare-conservative",
                "fairshare-conservative": "mrfs-conservative"}


def machine_cores(text: str, name: str) -> int:
    from engine.api import WorkloadError, parse_machines

    try:
        return max(1, parse_machines(text, source=name).cores)
    except (WorkloadError, ValueError):
        return 1


def forwards(apps, schema_editor):  # noqa: ANN001, ANN201
    Preview = apps.get_model("preview", "Preview")
    Experiment = apps.get_model("experiments", "Experiment")
    Run = apps.get_model("experiments", "Run")
    for preview in Preview.objects.filter(experiment__isnull=True).order_by("pk"):
        experiment = Experiment.objects.create(
            owner_id=preview.owner_id, name=preview.name, shared=preview.shared, trace_id=preview.trace_id,
            procs=machine_cores(preview.machine_text, preview.machine_name) if preview.machine_text else 1)
        Experiment.objects.filter(pk=experiment.pk).update(created=preview.created)
        params = dict(preview.params or {})
        position = 0
        if (preview.summary or {}).get("recorded"):
            Run.objects.create(experiment=experiment, position=position, label="recorded",
                               policy={"preset": "recorded", "params": {}}, status="cancelled", error=NOT_CARRIED,
                               cancel_requested=True)
            position += 1
        for queues, other in SIDES:
            preset = COUNTERPARTS.get(preview.policy, preview.policy) if other else preview.policy
            Run.objects.create(experiment=experiment, position=position, label=f"{queues}: {preset}",
                               policy={"preset": preset, "params": params}, queues=queues, status="cancelled",
                               error=NOT_CARRIED, cancel_requested=True)
            position += 1
        preview.experiment = experiment
        preview.save(update_fields=["experiment"])
        shutil.rmtree(Path(settings.MEDIA_ROOT) / "previews" / str(preview.pk), ignore_errors=True)


class Migration(migrations.Migration):

    dependencies = [
        ('preview', '0005_preview_experiment'),
    ]

    operations = [
        migrations.RunPython(forwards, migrations.RunPython.noop),
    ]
