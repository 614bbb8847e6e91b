"""Tokens get an expiry, a name and a recognisable prefix.

They were already stored as SHA-256 digests, so nothing is re-hashed. A token issued before this
migration expires SCHEDLAB_TOKEN_MAX_AGE after it was issued, but not before a week from now, so
that scripts using an old token do not break without warning. Its prefix is unknown (blank).
"""

from datetime import timedelta

from django.conf import settings
from django.db import migrations, models
from django.utils import timezone

GRACE = timedelta(days=7)


def set_expiry(apps, schema_editor):
    Token = apps.get_model("api", "Token")
    earliest = timezone.now() + GRACE
    for token in Token.objects.all():
        token.expires = max(token.created + timedelta(seconds=settings.SCHEDLAB_TOKEN_MAX_AGE), earliest)
        token.save(update_fields=["expires"])


class Migration(migrations.Migration):

    dependencies = [("api", "0001_initial")]

    operations = [
        migrations.AlterModelOptions(name="token", options={"ordering": ["-created", "-pk"]}),
        migrations.AddField(model_name="token", name="name", field=models.CharField(
            blank=True, help_text="What it is for, e.g. “laptop scripts”.", max_length=100)),
        migrations.AddField(model_name="token", name="prefix", field=models.CharField(blank=True, max_length=6)),
        migrations.AddField(model_name="token", name="expires", field=models.DateTimeField(null=True)),
        migrations.RunPython(set_expiry, migrations.RunPython.noop),
        migrations.AlterField(model_name="token", name="expires", field=models.DateTimeField()),
    ]
