"""One set of lease columns for every leased job: a dialogue's and a judging run's claim moves to `claim_token`."""

from django.db import migrations, models

CLAIM_TOKEN = models.CharField(
    blank=True,
    help_text="The claim of the worker holding the job (its name and a random part).",
    max_length=200,
)
LEASE_UNTIL = models.DateTimeField(
    blank=True, help_text="A claim not renewed by then is taken over by another worker.", null=True
)
RUNS = models.PositiveIntegerField(default=0, help_text="Times a worker claimed it (more than 1 after a crash).")


class Migration(migrations.Migration):
    dependencies = [
        ("audits", "0013_endpoint_roles"),
    ]

    operations = [
        # A dialogue's `claim_token` was never written: its claim lived in `claimed_by`, which takes the name.
        migrations.RemoveField(model_name="dialogue", name="claim_token"),
        migrations.RenameField(model_name="dialogue", old_name="claimed_by", new_name="claim_token"),
        migrations.RenameField(model_name="judgerun", old_name="claimed_by", new_name="claim_token"),
        migrations.AlterField(model_name="dialogue", name="claim_token", field=CLAIM_TOKEN),
        migrations.AlterField(model_name="judgerun", name="claim_token", field=CLAIM_TOKEN),
        migrations.AlterField(model_name="analysisresult", name="claim_token", field=CLAIM_TOKEN),
        migrations.AlterField(model_name="dialogue", name="lease_until", field=LEASE_UNTIL),
        migrations.AlterField(model_name="judgerun", name="lease_until", field=LEASE_UNTIL),
        migrations.AlterField(model_name="analysisresult", name="lease_until", field=LEASE_UNTIL),
        migrations.AlterField(model_name="analysisresult", name="runs", field=RUNS),
    ]
