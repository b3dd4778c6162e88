"""Label revisions: earlier versions of main labels, and each stage's revision window (time and items)."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0006_stage_item_rule"),
    ]

    operations = [
        migrations.AddField(
            model_name="stagelabelling",
            name="revision_items",
            field=models.PositiveSmallIntegerField(
                default=5, help_text="…and only on their last this many submitted items."
            ),
        ),
        migrations.AddField(
            model_name="stagelabelling",
            name="revision_minutes",
            field=models.PositiveIntegerField(
                default=60, help_text="An annotator may revise a label this long after submitting it (0: never)."
            ),
        ),
        migrations.CreateModel(
            name="LabelRevision",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("version", models.PositiveSmallIntegerField(help_text="1 for the first answer, then 2, 3, …")),
                ("value", models.CharField(blank=True, max_length=100)),
                ("unsure", models.BooleanField(default=False)),
                ("justification", models.TextField(blank=True)),
                ("given_at", models.DateTimeField(help_text="When this version was given.")),
                ("replaced_at", models.DateTimeField(help_text="When the annotator replaced it by the next version.")),
                (
                    "label",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="revisions", to="annotation.label"
                    ),
                ),
            ],
            options={
                "ordering": ["label", "version"],
                "constraints": [
                    models.UniqueConstraint(fields=("label", "version"), name="annotation_label_revision_unique")
                ],
            },
        ),
    ]
