"""The Token model comes over from webapp.api with its rows.

First the model enters accounts' state on the table it already has (api_token; no database change),
then the table is renamed to accounts_token, and the content type api.token becomes accounts.token so
that its permissions and admin history follow it. Every step runs backwards too.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


def content_type_to(app_label: str, from_label: str):
    def move(apps, schema_editor):
        ContentType = apps.get_model("contenttypes", "ContentType")
        if not ContentType.objects.filter(app_label=app_label, model="token").exists():
            ContentType.objects.filter(app_label=from_label, model="token").update(app_label=app_label)
    return move


class Migration(migrations.Migration):

    dependencies = [
        ("accounts", "0001_initial"),
        ("api", "0003_token_moves_to_accounts"),
        ("contenttypes", "0002_remove_content_type_name"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(state_operations=[
            migrations.CreateModel(
                name="Token",
                fields=[
                    ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                    ("digest", models.CharField(max_length=64, unique=True)),
                    ("name", models.CharField(blank=True, help_text="What it is for, e.g. “laptop scripts”.",
                                              max_length=100)),
                    ("prefix", models.CharField(blank=True, max_length=6)),
                    ("created", models.DateTimeField(auto_now_add=True)),
                    ("expires", models.DateTimeField()),
                    ("last_used", models.DateTimeField(blank=True, null=True)),
                    ("user", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="api_tokens",
                                               to=settings.AUTH_USER_MODEL)),
                ],
                options={"ordering": ["-created", "-pk"], "db_table": "api_token"},
            ),
        ]),
        migrations.AlterModelTable(name="token", table=None),
        migrations.RunPython(content_type_to("accounts", "api"), content_type_to("api", "accounts")),
    ]
