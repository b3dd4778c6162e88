"""Joins the two migrations that followed 0013: leased jobs and the rubric's metrics (independent changes)."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("audits", "0014_leased_jobs"),
        ("audits", "0014_rubric_metrics"),
    ]

    operations = []
