from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('experiments', '0006_replicate_set'),
    ]

    operations = [
        migrations.AddField(
            model_name='run',
            name='queues',
            field=models.CharField(blank=True, choices=[('current', 'current'), ('proposed', 'proposed')], max_length=10),
        ),
    ]
