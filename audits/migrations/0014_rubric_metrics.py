"""A rubric version names the metrics it asks for; every judge rubric stored before asks for the default five."""

from django.db import migrations, models

# The metrics every judge rubric asked for when versions did not name them (written out: a migration stays as it ran).
FIVE_METRICS = ["mistake_recognize", "answer_leakage", "step_scaffolded", "actionability", "corrective_tone"]


def name_the_five(apps, schema_editor):
    template = apps.get_model("audits", "PromptTemplate")
    template.objects.filter(kind="judge_rubric").update(metrics=FIVE_METRICS)


class Migration(migrations.Migration):
    dependencies = [
        ("audits", "0013_endpoint_roles"),
    ]

    operations = [
        migrations.AddField(
            model_name="prompttemplate",
            name="metrics",
            field=models.JSONField(
                blank=True,
                default=list,
                help_text="A judge rubric's metrics (keys of the metric registry), in the order it asks for them: "
                "the judge's reply must score each. Empty for other kinds; a judge rubric saved without them asks "
                "for the default five.",
            ),
        ),
        migrations.RunPython(name_the_five, migrations.RunPython.noop),
    ]
