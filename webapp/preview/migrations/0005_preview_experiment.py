import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('experiments', '0007_run_queues'),
        ('preview', '0004_preview_params'),
    ]

    operations = [
        migrations.AddField(
            model_name='preview',
            name='experiment',
            field=models.OneToOneField(null=True, on_delete=django.db.models.deletion.CASCADE, related_name='preview',
                                       to='experiments.experiment'),
        ),
    ]
