import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('preview', '0006_previews_become_experiments'),
    ]

    operations = [
        migrations.AlterModelOptions(
            name='preview',
            options={'ordering': ['-experiment__created', '-pk']},
        ),
        migrations.AlterField(
            model_name='preview',
            name='experiment',
            field=models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='preview',
                                       to='experiments.experiment'),
        ),
        *[migrations.RemoveField(model_name='preview', name=name) for name in (
            'owner', 'name', 'shared', 'trace', 'params', 'status', 'error', 'summary', 'created', 'finished',
            'queued_at', 'resends', 'started', 'heartbeat_at', 'progress')],
    ]
