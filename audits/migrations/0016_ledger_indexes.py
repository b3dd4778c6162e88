"""The ledger keeps only the indexes a query uses (audits/tests/test_ledger_indexes.py names each one's query).

Dropped: request_hash's pattern-ops copy (PostgreSQL adds it for `unique=True`; no query matches a hash by
LIKE), first_audit's own index (the (first_audit, status) index leads with it) and batch's (no query looks
calls up by batch, and no code deletes a batch). request_hash's uniqueness is added as a constraint first.
"""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("audits", "0015_merge_leased_jobs_rubric_metrics"),
    ]

    operations = [
        migrations.AddConstraint(
            model_name="llmcall",
            constraint=models.UniqueConstraint(fields=("request_hash",), name="llmcall_request_hash_unique"),
        ),
        migrations.AlterField(
            model_name="llmcall",
            name="request_hash",
            field=models.CharField(max_length=64),
        ),
        migrations.AlterField(
            model_name="llmcall",
            name="first_audit",
            field=models.ForeignKey(
                blank=True,
                db_index=False,
                help_text="The audit that sent (and paid for) this call; others reuse it from the ledger.",
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="paid_calls",
                to="audits.audit",
            ),
        ),
        migrations.AlterField(
            model_name="llmcall",
            name="batch",
            field=models.ForeignKey(
                blank=True,
                db_index=False,
                help_text="The Batch API batch that answered it (blank: sent online).",
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="calls",
                to="audits.judgebatch",
            ),
        ),
    ]
