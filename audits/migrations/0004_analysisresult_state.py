"""Fairness analyses run on a worker: AnalysisResult gains its state (queued | running | done | failed),
progress (cells done / total), error, claim and lease, and times. Rows that exist already hold a finished
result, so they become `done`; `result` may be empty until a row is done."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("audits", "0003_analysisresult"),
    ]

    operations = [
        migrations.AddField(
            model_name="analysisresult",
            name="status",
            field=models.CharField(
                choices=[("queued", "Queued"), ("running", "Running"), ("done", "Done"), ("failed", "Failed")],
                default="done",
                max_length=10,
            ),
            preserve_default=False,
        ),
        migrations.AlterField(
            model_name="analysisresult",
            name="status",
            field=models.CharField(
                choices=[("queued", "Queued"), ("running", "Running"), ("done", "Done"), ("failed", "Failed")],
                default="queued",
                max_length=10,
            ),
        ),
        migrations.AddField(
            model_name="analysisresult",
            name="cells_done",
            field=models.PositiveIntegerField(default=0, help_text="Contrast × metric cells computed so far."),
        ),
        migrations.AddField(
            model_name="analysisresult",
            name="cells_total",
            field=models.PositiveIntegerField(default=0, help_text="0 until the computation knows its size."),
        ),
        migrations.AddField(
            model_name="analysisresult",
            name="error",
            field=models.TextField(blank=True, help_text="Why the last computation failed."),
        ),
        migrations.AddField(
            model_name="analysisresult",
            name="claim_token",
            field=models.CharField(blank=True, help_text="The claim of the computation running.", max_length=40),
        ),
        migrations.AddField(
            model_name="analysisresult",
            name="lease_until",
            field=models.DateTimeField(
                blank=True, help_text="A queued or running row not renewed by then is queued again.", null=True
            ),
        ),
        migrations.AddField(
            model_name="analysisresult",
            name="runs",
            field=models.PositiveIntegerField(default=0, help_text="Times a computation was claimed."),
        ),
        migrations.AddField(
            model_name="analysisresult",
            name="queued_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="analysisresult",
            name="started_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="analysisresult",
            name="finished_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AlterField(
            model_name="analysisresult",
            name="scores_fingerprint",
            field=models.CharField(
                help_text="Of the scores the result was (or is being) computed from.", max_length=64
            ),
        ),
        migrations.AlterField(
            model_name="analysisresult",
            name="result",
            field=models.JSONField(
                blank=True,
                default=dict,
                help_text="Rows of the judge-scored and conversation-level contrast tables (done).",
            ),
        ),
    ]
