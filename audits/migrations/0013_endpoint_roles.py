"""Endpoint roles: every existing endpoint gets all roles; the demo's simulation endpoints get their own."""

from django.db import migrations, models

import audits.endpoint_roles

# The demo's simulation endpoints (audits.demo) by name, and the one role each plays there.
DEMO_ROLES = {
    "Simulated tutor A (fair)": ["tutor"],
    "Simulated tutor B (planted bias)": ["tutor"],
    "Simulated student": ["student"],
    "Simulated judge (rule-based)": ["judge"],
    "Simulated judge (cue-sensitive)": ["judge"],
}


def demo_roles(apps, schema_editor):
    endpoint = apps.get_model("audits", "ModelEndpoint")
    for name, roles in DEMO_ROLES.items():
        endpoint.objects.filter(name=name, provider="simulation").update(roles=roles)


class Migration(migrations.Migration):
    dependencies = [
        ("audits", "0012_batch_truth"),
    ]

    operations = [
        migrations.AddField(
            model_name="modelendpoint",
            name="roles",
            field=models.JSONField(
                default=audits.endpoint_roles.all_roles,
                help_text="What this endpoint may be in an audit: tutor, student, judge (the judge's role covers the "
                "reveal check). The launch form offers it only in those lists.",
            ),
        ),
        migrations.RunPython(demo_roles, migrations.RunPython.noop),
    ]
