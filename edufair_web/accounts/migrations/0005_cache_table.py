"""The default cache's table (settings.CACHE_TABLE): the throttles' counts shared by every process without Redis."""

from django.conf import settings
from django.core.management.commands.createcachetable import Command as CreateCacheTable
from django.db import migrations


def create_cache_table(apps, schema_editor):
    # Whatever CACHES says now (a test's local memory, CACHE_URL's Redis): the table is there if the default is used.
    command = CreateCacheTable()
    command.verbosity = 0
    command.create_table(schema_editor.connection.alias, settings.CACHE_TABLE, dry_run=False)


def drop_cache_table(apps, schema_editor):
    schema_editor.execute(f"DROP TABLE IF EXISTS {schema_editor.quote_name(settings.CACHE_TABLE)}")


class Migration(migrations.Migration):
    dependencies = [("accounts", "0004_drop_plaintext_api_tokens")]

    operations = [migrations.RunPython(create_cache_table, drop_cache_table)]
