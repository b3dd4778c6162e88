"""The audit pages: endpoints, the launch form, the audit page with its live panel, the transcript viewer."""

import pytest
from django.urls import reverse

from audits.models import Audit, Dialogue
from audits.services.audit_lifecycle import audit_create
from audits.services.dialogue_batches import audit_run_inline
from audits.tests.engine_factories import PLANTED_BIAS, explicit_conditions, make_questions, simulation_endpoint

pytestmark = pytest.mark.django_db


@pytest.fixture
def finished_audit():
    tutor = simulation_endpoint("page-tutor", bias=PLANTED_BIAS)
    other = simulation_endpoint("page-other")
    audit = audit_create(
        name="page audit",
        tutors=[tutor],
        student_endpoint=other,
        judge_endpoint=other,
        questions=make_questions(2),
        conditions=explicit_conditions(),
    )
    audit_run_inline(audit=audit)
    return audit


def test_the_audit_page_shows_progress_and_the_simulation_label(researcher_client, finished_audit):
    page = researcher_client.get(reverse("audits:audit-detail", args=[finished_audit.pk])).content.decode()
    assert "page audit" in page and "badge simulation" in page and "Clone with one factor changed" in page
    assert 'id="dialogues-done">6<' in page
    panel = researcher_client.get(reverse("audits:audit-progress", args=[finished_audit.pk])).content.decode()
    # A finished audit's panel stops polling.
    assert "hx-trigger" not in panel and "finished" in panel


def test_a_running_audit_panel_polls(researcher_client, finished_audit):
    Audit.objects.filter(pk=finished_audit.pk).update(status=Audit.Status.RUNNING)
    panel = researcher_client.get(reverse("audits:audit-progress", args=[finished_audit.pk])).content.decode()
    assert 'hx-trigger="every 2s"' in panel


def test_the_transcript_viewer_shows_turns_scores_and_calls(researcher_client, finished_audit):
    dialogue = Dialogue.objects.filter(audit=finished_audit).exclude(condition__kind="control").first()
    page = researcher_client.get(reverse("audits:dialogue-detail", args=[dialogue.pk])).content.decode()
    assert dialogue.condition.persona_cue.split('"')[1][:20] in page
    assert "corrective_tone =" in page and "Model calls" in page and dialogue.end_reason in page
    # Each call as a conversation (role, then text), not a Python repr of its message list.
    assert 'class="chat-message role-system"' in page and 'class="chat-message role-reply' in page
    assert "[{'role':" not in page and "{&#x27;role&#x27;" not in page


def test_pause_and_cancel_from_the_page(researcher_client, finished_audit):
    Audit.objects.filter(pk=finished_audit.pk).update(status=Audit.Status.RUNNING)
    researcher_client.post(reverse("audits:audit-action", args=[finished_audit.pk, "pause"]))
    assert Audit.objects.get(pk=finished_audit.pk).status == Audit.Status.PAUSED
    researcher_client.post(reverse("audits:audit-action", args=[finished_audit.pk, "cancel"]))
    assert Audit.objects.get(pk=finished_audit.pk).status == Audit.Status.CANCELLED


def test_the_create_form_makes_and_launches_an_audit(researcher_client, monkeypatch):
    monkeypatch.setattr("audits.tasks.audit_run_batch_task.apply_async", lambda *a, **k: None)
    tutor, other = simulation_endpoint("form-tutor"), simulation_endpoint("form-other")
    make_questions(3)
    response = researcher_client.post(
        reverse("audits:audit-new"),
        {
            "name": "from the form",
            "tutors": [tutor.pk],
            "student_endpoint": other.pk,
            "judge_endpoint": other.pk,
            "domains": ["mathematics"],
            "count": 2,
            "seed": 0,
            "control": "on",
            "explicit_dimensions": ["gender"],
            "t_max": 10,
            "max_reasks": 2,
            "launch": "on",
            # Two questions give two pairs per contrast: the form asks to confirm launching such a design.
            "confirm": "on",
        },
    )
    audit = Audit.objects.get(name="from the form")
    assert response.status_code == 302 and response["Location"].endswith(f"/runs/{audit.pk}/")
    assert audit.status == Audit.Status.RUNNING and audit.dialogues.count() == 2 * 4


def test_pages_are_for_researchers_only(annotator_client, finished_audit):
    for url in (
        reverse("audits:audits"),
        reverse("audits:endpoints"),
        reverse("audits:audit-detail", args=[finished_audit.pk]),
    ):
        assert annotator_client.get(url).status_code == 403
