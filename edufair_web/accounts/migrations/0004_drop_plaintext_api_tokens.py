"""Drops rest_framework.authtoken's table, which the API no longer reads: it held every token in clear.

Tokens are django-rest-knox's now (digests only, with an expiry); users obtain new ones with their password.
"""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("accounts", "0003_operator_group")]

    operations = [migrations.RunSQL("DROP TABLE IF EXISTS authtoken_token", reverse_sql=migrations.RunSQL.noop)]
