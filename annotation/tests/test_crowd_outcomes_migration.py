"""The crowd-outcomes migration on a database that has crowd links already: a not-consented code of its own and the
former completion URL for every outcome, each recruit's latest ids and shown code, and no password left to a crowd
participant someone gave one to (their tokens gone too)."""

import pytest
from django.contrib.auth.hashers import make_password
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("annotation", "0011_crowd_entry")]
AFTER = [("annotation", "0012_crowd_outcomes")]


def migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state([*targets, ("knox", "0009_extend_authtoken_field")]).apps


@pytest.fixture(autouse=True)
def back_to_the_latest():
    """Later tests on this database need every migration: end at the leaves, whatever comes after 0012."""
    yield
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())


def test_existing_links_and_recruits_are_carried_over():
    apps = migrate(BEFORE)
    try:
        User = apps.get_model("auth", "User")
        Project = apps.get_model("annotation", "AnnotationProject")
        Stage = apps.get_model("annotation", "Stage")
        CrowdLink = apps.get_model("annotation", "CrowdLink")
        CrowdRecruit = apps.get_model("annotation", "CrowdRecruit")
        CrowdVisit = apps.get_model("annotation", "CrowdVisit")
        AuthToken = apps.get_model("knox", "AuthToken")
        stage = Stage.objects.create(project=Project.objects.create(name="Old"), name="S", order=1)
        link = CrowdLink.objects.create(
            stage=stage,
            key="k" * 32,
            completion_url="https://app.prolific.com/submissions/complete",
            completion_code="DONE",
            screened_out_code="OUT",
        )
        given = User.objects.create(username="crowd-given", password=make_password("set-by-a-researcher-1"))
        kept = User.objects.create(username="crowd-kept", password=make_password(None))
        other = User.objects.create(username="annotator-1", password=make_password("their-own-pass-1"))
        AuthToken.objects.create(user=given, digest="d" * 128, token_key="a" * 15, expiry=timezone.now())
        AuthToken.objects.create(user=other, digest="e" * 128, token_key="b" * 15, expiry=timezone.now())
        finished = CrowdRecruit.objects.create(link=link, user=given, participant_hash="h1", outcome="screened_out")
        CrowdRecruit.objects.create(link=link, user=kept, participant_hash="h2")
        for session in ("s1", "s2"):
            CrowdVisit.objects.create(recruit=finished, participant_id="P1", study_id="st", session_id=session)
        other_password = other.password
    finally:
        apps = migrate(AFTER)
    link = apps.get_model("annotation", "CrowdLink").objects.get()
    assert link.not_consented_code not in ("", "DONE", "OUT")
    assert link.screened_out_url == link.not_consented_url == link.completion_url
    recruits = {r.user.username: r for r in apps.get_model("annotation", "CrowdRecruit").objects.select_related("user")}
    assert (recruits["crowd-given"].participant_id, recruits["crowd-given"].session_id) == ("P1", "s2")
    assert recruits["crowd-given"].code == "OUT" and recruits["crowd-kept"].code == ""
    User = apps.get_model("auth", "User")
    assert User.objects.get(username="crowd-given").password.startswith("!")
    assert User.objects.get(username="annotator-1").password == other_password
    tokens = apps.get_model("knox", "AuthToken").objects.values_list("user__username", flat=True)
    assert list(tokens) == ["annotator-1"]
