from django.db import migrations, models
from django.db.models import F


def sent_before_the_dispatcher(apps, schema_editor):
    """Runs queued or run before the fair dispatcher existed had their message sent when queued."""
    Run = apps.get_model("experiments", "Run")
    Run.objects.all().update(dispatched_at=F("queued_at"))


class Migration(migrations.Migration):

    dependencies = [
        ("experiments", "0004_run_resends"),
    ]

    operations = [
        migrations.AddField(
            model_name="run",
            name="dispatched_at",
            field=models.DateTimeField(blank=True, db_index=True, null=True),
        ),
        migrations.RunPython(sent_before_the_dispatcher, migrations.RunPython.noop),
    ]
