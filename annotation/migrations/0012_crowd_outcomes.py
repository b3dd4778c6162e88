"""Crowd outcomes: a code and a redirect URL per outcome (not consented added), and on each recruit the code they
were shown and their latest platform ids (filled from their visits).

A crowd participant someone gave a password to (through an invitation, before they were refused) loses it, with
their API tokens and the sessions it opened: they sign in through the study link only."""

import secrets

from django.contrib.auth.hashers import UNUSABLE_PASSWORD_PREFIX, make_password
from django.db import migrations, models


def fill(apps, schema_editor):
    CrowdLink = apps.get_model("annotation", "CrowdLink")
    CrowdRecruit = apps.get_model("annotation", "CrowdRecruit")
    CrowdVisit = apps.get_model("annotation", "CrowdVisit")
    for link in CrowdLink.objects.all():
        codes = {link.completion_code, link.screened_out_code}
        code = secrets.token_hex(4).upper()
        while code in codes:
            code = secrets.token_hex(4).upper()
        # Until now one URL took every finished recruit back to the platform: it stays theirs.
        link.not_consented_code = code
        link.screened_out_url = link.completion_url
        link.not_consented_url = link.completion_url
        link.save(update_fields=["not_consented_code", "screened_out_url", "not_consented_url"])
    for recruit in CrowdRecruit.objects.select_related("link"):
        visit = CrowdVisit.objects.filter(recruit=recruit).order_by("-at", "-id").first()
        if visit is not None:
            recruit.participant_id = visit.participant_id
            recruit.study_id = visit.study_id
            recruit.session_id = visit.session_id
        if recruit.outcome == "completed":
            recruit.code = recruit.link.completion_code
        elif recruit.outcome == "screened_out":
            recruit.code = recruit.link.screened_out_code
        recruit.save(update_fields=["participant_id", "study_id", "session_id", "code"])


def link_only(apps, schema_editor):
    User = apps.get_model("auth", "User")
    AuthToken = apps.get_model("knox", "AuthToken")
    crowd = User.objects.filter(crowd_recruit__isnull=False)
    given = list(crowd.exclude(password__startswith=UNUSABLE_PASSWORD_PREFIX).values_list("pk", flat=True))
    for pk in given:  # a new password hash also ends the sessions the old one opened
        User.objects.filter(pk=pk).update(password=make_password(None))
    AuthToken.objects.filter(user_id__in=given).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0011_crowd_entry"),
        ("knox", "0009_extend_authtoken_field"),
    ]

    operations = [
        migrations.AlterField(
            model_name="crowdlink",
            name="completion_url",
            field=models.URLField(
                blank=True,
                help_text="Where a recruit who completed is sent, with ?cc=<code> added.",
                max_length=500,
            ),
        ),
        migrations.AddField(
            model_name="crowdlink",
            name="screened_out_url",
            field=models.URLField(
                blank=True,
                help_text="Where a screened-out recruit is sent, with ?cc=<code> added.",
                max_length=500,
            ),
        ),
        migrations.AddField(
            model_name="crowdlink",
            name="not_consented_url",
            field=models.URLField(
                blank=True,
                help_text="Where a recruit who did not consent is sent, with ?cc=<code> added.",
                max_length=500,
            ),
        ),
        migrations.AddField(
            model_name="crowdlink",
            name="not_consented_code",
            field=models.CharField(
                default="",
                help_text="The code of a recruit who chose not to consent (or to leave) on the crowd pages.",
                max_length=64,
            ),
            preserve_default=False,
        ),
        migrations.AlterField(
            model_name="crowdrecruit",
            name="outcome",
            field=models.CharField(
                blank=True,
                choices=[
                    ("completed", "Completed"),
                    ("screened_out", "Screened out"),
                    ("not_consented", "Did not consent"),
                ],
                max_length=16,
            ),
        ),
        migrations.AddField(
            model_name="crowdrecruit",
            name="code",
            field=models.CharField(blank=True, help_text="The completion code the recruit was shown.", max_length=64),
        ),
        migrations.AddField(
            model_name="crowdrecruit",
            name="participant_id",
            field=models.CharField(blank=True, help_text="The platform's id, latest visit.", max_length=128),
        ),
        migrations.AddField(
            model_name="crowdrecruit",
            name="study_id",
            field=models.CharField(blank=True, help_text="The platform's study id, latest visit.", max_length=128),
        ),
        migrations.AddField(
            model_name="crowdrecruit",
            name="session_id",
            field=models.CharField(blank=True, help_text="The platform's session id, latest visit.", max_length=128),
        ),
        migrations.RunPython(fill, migrations.RunPython.noop),
        migrations.RunPython(link_only, migrations.RunPython.noop),
    ]
