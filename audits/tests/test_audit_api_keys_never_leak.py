"""Acceptance 6: an API key reaches the model server and nothing else — not a page, an API response, a
log line, the ledger or the scores frame. The key lives only in the environment variable the endpoint
names."""

import logging

import pytest
from django.urls import reverse

from audits.models import Dialogue, LLMCall, ModelEndpoint
from audits.selectors.runs import audit_scores_frame
from audits.services.audit_lifecycle import audit_create
from audits.services.dialogue_batches import audit_run_inline
from audits.tests.engine_factories import explicit_conditions, make_questions, openai_endpoint
from audits.tests.openai_server import OpenAITestServer

SECRET = "sk-edufair-test-SECRET-7f3a9c1e5b"


@pytest.mark.django_db
def test_the_key_is_used_but_never_shown(client, make_user, monkeypatch, caplog, settings):
    settings.AUDIT_RETRY_POLICY = {"backoff_base": 0.01}
    monkeypatch.setenv("EDUFAIR_KEY_TEST_TUTOR", SECRET)
    caplog.set_level(logging.DEBUG)
    researcher = make_user("researcher")
    client.force_login(researcher)
    with OpenAITestServer() as server:
        server.plan("tutor", "500")  # a retry writes a log line: it must not carry the key either
        tutor = openai_endpoint("keyed-tutor", server.base_url, api_key_env="EDUFAIR_KEY_TEST_TUTOR")
        other = openai_endpoint("keyed-other", server.base_url, api_key_env="EDUFAIR_KEY_TEST_TUTOR")
        audit = audit_create(
            name="keyed",
            tutors=[tutor],
            student_endpoint=other,
            judge_endpoint=other,
            questions=make_questions(1),
            conditions=explicit_conditions(),
        )
        audit_run_inline(audit=audit)
        assert f"Bearer {SECRET}" in server.state.authorizations  # the key was really used

        dialogue = Dialogue.objects.filter(audit=audit).first()
        pages = [
            reverse("audits:endpoints"),
            reverse("audits:endpoint-edit", args=[tutor.pk]),
            reverse("audits:audits"),
            reverse("audits:audit-detail", args=[audit.pk]),
            reverse("audits:audit-progress", args=[audit.pk]),
            reverse("audits:dialogue-detail", args=[dialogue.pk]),
            reverse("admin:audits_modelendpoint_change", args=[tutor.pk]),
            reverse("admin:audits_llmcall_changelist"),
            reverse("admin:audits_llmcall_change", args=[LLMCall.objects.first().pk]),
            reverse("admin:audits_dialogue_change", args=[dialogue.pk]),
            "/api/model-endpoints/",
            f"/api/model-endpoints/{tutor.pk}/",
            f"/api/audits/{audit.pk}/",
            f"/api/audits/{audit.pk}/progress/",
            f"/api/dialogues/{dialogue.pk}/",
            "/api/dialogues/?audit=" + str(audit.pk),
        ]
        for url in pages:
            response = client.get(url)
            assert response.status_code == 200, url
            assert SECRET not in response.content.decode(), url
        test = client.post(f"/api/model-endpoints/{tutor.pk}/test-connection/")
        assert test.status_code == 200 and test.json()["ok"] and SECRET not in test.content.decode()

    assert SECRET not in caplog.text
    stored = repr(list(LLMCall.objects.values())) + repr(list(ModelEndpoint.objects.values()))
    assert SECRET not in stored
    frame = audit_scores_frame(audit)
    assert SECRET not in repr({name: list(column) for name, column in frame.items()})


@pytest.mark.django_db
def test_an_endpoint_refuses_a_key_pasted_where_the_variable_name_goes(researcher_client):
    response = researcher_client.post(
        "/api/model-endpoints/",
        {"name": "oops", "provider": "openai", "model": "m", "api_key_env": SECRET},
        content_type="application/json",
    )
    assert response.status_code == 400
    assert "NAME of an environment variable" in response.content.decode()
    assert not ModelEndpoint.objects.filter(name="oops").exists()
