"""Crowd entry links per stage, their pseudonymous recruits and each visit's platform ids."""

import django.core.validators
import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0008_label_revision"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="CrowdLink",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("key", models.CharField(help_text="The random part of the entry URL.", max_length=43, unique=True)),
                ("is_open", models.BooleanField(default=True, help_text="A closed link takes no new recruits.")),
                (
                    "max_recruits",
                    models.PositiveIntegerField(default=30, validators=[django.core.validators.MinValueValidator(1)]),
                ),
                (
                    "items_per_recruit",
                    models.PositiveIntegerField(
                        default=10,
                        help_text="Main items a recruit labels to complete.",
                        validators=[django.core.validators.MinValueValidator(1)],
                    ),
                ),
                ("participant_param", models.CharField(default="PROLIFIC_PID", max_length=64)),
                ("study_param", models.CharField(default="STUDY_ID", max_length=64)),
                ("session_param", models.CharField(default="SESSION_ID", max_length=64)),
                (
                    "completion_url",
                    models.URLField(
                        blank=True, help_text="Where a finished recruit is sent, with ?cc=<code> added.", max_length=500
                    ),
                ),
                (
                    "completion_code",
                    models.CharField(help_text="The code of a recruit who completed the quota.", max_length=64),
                ),
                (
                    "screened_out_code",
                    models.CharField(help_text="The code of a recruit the gate screened out.", max_length=64),
                ),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                (
                    "stage",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE, related_name="crowd_link", to="annotation.stage"
                    ),
                ),
            ],
        ),
        migrations.CreateModel(
            name="CrowdRecruit",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("participant_hash", models.CharField(max_length=64)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("last_seen_at", models.DateTimeField(auto_now_add=True)),
                (
                    "outcome",
                    models.CharField(
                        blank=True,
                        choices=[("completed", "Completed"), ("screened_out", "Screened out")],
                        max_length=16,
                    ),
                ),
                ("finished_at", models.DateTimeField(blank=True, null=True)),
                (
                    "link",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="recruits", to="annotation.crowdlink"
                    ),
                ),
                (
                    "user",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="crowd_recruit",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "ordering": ["link", "created_at", "id"],
            },
        ),
        migrations.CreateModel(
            name="CrowdVisit",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("participant_id", models.CharField(max_length=128)),
                ("study_id", models.CharField(blank=True, max_length=128)),
                ("session_id", models.CharField(blank=True, max_length=128)),
                ("at", models.DateTimeField(auto_now_add=True)),
                (
                    "recruit",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="visits", to="annotation.crowdrecruit"
                    ),
                ),
            ],
            options={
                "ordering": ["recruit", "at", "id"],
            },
        ),
        migrations.AddConstraint(
            model_name="crowdrecruit",
            constraint=models.UniqueConstraint(
                fields=("link", "participant_hash"), name="annotation_crowd_participant_unique"
            ),
        ),
    ]
