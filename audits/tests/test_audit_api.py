"""The audit API: create from a design, launch, pause, resume, cancel, progress, clone — researchers only."""

import pytest

from audits.models import Audit, Dialogue
from audits.services.dialogue_batches import audit_run_inline
from audits.tests.engine_factories import make_questions, simulation_endpoint

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("commit_hooks_run")]  # tasks are sent on commit


@pytest.fixture
def endpoints():
    return simulation_endpoint("api-tutor"), simulation_endpoint("api-other")


@pytest.fixture
def no_workers(settings, monkeypatch):
    """Launching enqueues batches; here nothing consumes them (the test runs the audit inline)."""
    sent = []
    monkeypatch.setattr(
        "audits.tasks.audit_run_batch_task.apply_async", lambda args, **kw: sent.append(args), raising=True
    )
    return sent


def create(client, endpoints, **extra):
    tutor, other = endpoints
    make_questions(3)
    payload = {
        "name": "api audit",
        "tutors": [tutor.pk],
        "student_endpoint": other.pk,
        "judge_endpoint": other.pk,
        "selection": {"domains": ["mathematics"], "count": 2, "seed": 0},
        "conditions": {"control": True, "explicit_dimensions": ["first_language"]},
        **extra,
    }
    return client.post("/api/audits/", payload, content_type="application/json")


def test_create_launch_pause_resume_cancel(researcher_client, endpoints, no_workers):
    response = create(researcher_client, endpoints)
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["status"] == "draft" and body["question_count"] == 2 and len(body["conditions"]) == 3
    assert body["uses_simulation"] is True
    audit_id = body["id"]

    launched = researcher_client.post(f"/api/audits/{audit_id}/launch/").json()
    assert launched["status"] == "running" and launched["progress"]["total"] == 2 * 3
    assert sum(len(batch[1]) for batch in no_workers) == 6  # every dialogue sent to the workers

    assert researcher_client.post(f"/api/audits/{audit_id}/pause/").json()["status"] == "paused"
    assert researcher_client.post(f"/api/audits/{audit_id}/resume/").json()["status"] == "running"
    audit_run_inline(audit=Audit.objects.get(pk=audit_id))
    progress = researcher_client.get(f"/api/audits/{audit_id}/progress/").json()
    assert progress["status"] == "finished" and progress["done"] == 6 and progress["percent"] == 100

    dialogues = researcher_client.get(f"/api/dialogues/?audit={audit_id}").json()
    assert dialogues["count"] == 6
    detail = researcher_client.get(f"/api/dialogues/{dialogues['results'][0]['id']}/").json()
    assert detail["turns"] and detail["calls"] and detail["end_reason"] in ("revealed", "confirmed", "t_max")


def test_a_paused_audit_claims_nothing(researcher_client, endpoints, no_workers):
    audit_id = create(researcher_client, endpoints, launch=True).json()["id"]
    researcher_client.post(f"/api/audits/{audit_id}/pause/")
    audit_run_inline(audit=Audit.objects.get(pk=audit_id))
    assert set(Dialogue.objects.filter(audit_id=audit_id).values_list("status", flat=True)) == {"pending"}


def test_cancel_stops_pending_work(researcher_client, endpoints, no_workers):
    audit_id = create(researcher_client, endpoints, launch=True).json()["id"]
    response = researcher_client.post(f"/api/audits/{audit_id}/cancel/").json()
    assert response["status"] == "cancelled" and response["result"] == 6
    assert researcher_client.post(f"/api/audits/{audit_id}/launch/").status_code == 409


def test_clone_through_the_api(researcher_client, endpoints, no_workers):
    audit_id = create(researcher_client, endpoints).json()["id"]
    response = researcher_client.post(
        f"/api/audits/{audit_id}/clone/", {"factor": "seed", "value": 5}, content_type="application/json"
    )
    assert response.status_code == 201
    assert response.json()["seed"] == 5 and response.json()["cloned_from"] == audit_id


def test_only_researchers_may_use_the_audit_api(annotator_client, endpoints):
    assert annotator_client.get("/api/audits/").status_code == 403
    assert annotator_client.get("/api/model-endpoints/").status_code == 403
    assert annotator_client.get("/api/dialogues/").status_code == 403
