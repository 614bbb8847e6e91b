"""The Token model moves to webapp.accounts (the app that owns accounts' credentials), so that
accounts no longer imports api. Here it only leaves api's migration state: its table and rows stay,
and accounts 0002 takes them over (and renames the table)."""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [("api", "0002_token_expiry")]

    operations = [
        migrations.SeparateDatabaseAndState(state_operations=[migrations.DeleteModel(name="Token")]),
    ]
