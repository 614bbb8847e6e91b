from django.conf import settings
from django.db import migrations, models
import django.db.models.deletion


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="Quota",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("max_active_runs", models.PositiveIntegerField(blank=True, help_text="Runs queued or running at once; empty: the server's default.", null=True)),
                ("max_runs_per_experiment", models.PositiveIntegerField(blank=True, help_text="Runs in one experiment, sweep or study; empty: the server's default.", null=True)),
                ("disk_bytes", models.PositiveBigIntegerField(blank=True, help_text="Bytes of uploads, parsed caches and results; empty: the server's default.", null=True)),
                ("user", models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name="quota", to=settings.AUTH_USER_MODEL)),
            ],
        ),
    ]
