"""llama.cpp's server while it loads its model: 503 `{"error": {"code": 503, "message": "Loading model", "type":
"unavailable_error"}}`. The connection test waits for it and, if it is still loading, says "loading" rather than
failed; an audit started meanwhile waits it out and completes."""

import pytest

from audits.models import Audit, Dialogue, LLMCall
from audits.services.dialogue_batches import audit_run_inline
from audits.services.endpoints import endpoint_connection_test
from audits.tests.server_emulations import EmulatedServer, emulated_endpoint, small_audit

pytestmark = pytest.mark.django_db


def test_the_connection_test_of_a_server_still_loading_says_loading(researcher_client):
    with EmulatedServer("llamacpp", loading_requests=10**6) as server:
        endpoint = emulated_endpoint("llama.cpp loading", server)
        _, service = endpoint_connection_test(endpoint=endpoint)
        tries = server.count()
        api = researcher_client.post(f"/api/model-endpoints/{endpoint.pk}/test-connection/").json()
    assert tries > 1  # it asked again: it waited for the model
    for door, message in {"service": service, "API": api["message"]}.items():
        assert message.lower().startswith("loading"), (door, message)
        assert "Loading model" in message and "failed" not in message.lower(), door
    assert api["ok"] is not True
    endpoint.refresh_from_db()
    assert endpoint.last_test_ok is not True


def test_the_connection_test_waits_for_a_model_that_finishes_loading():
    with EmulatedServer("llamacpp", loading_requests=1) as server:
        endpoint = emulated_endpoint("llama.cpp loaded", server)
        ok, message = endpoint_connection_test(endpoint=endpoint)
        answered = [r.answered for r in server.completions()]
    assert answered == ["llamacpp_loading", "reply"]
    assert ok is True and message.startswith("answered"), message


def test_an_audit_started_while_the_model_loads_waits_and_completes(settings):
    settings.AUDIT_RETRY_POLICY = {"max_attempts": 4, "backoff_base": 0.01, "backoff_cap": 0.05}
    with EmulatedServer("llamacpp", loading_requests=2) as server:
        endpoint = emulated_endpoint("llama.cpp", server)
        audit = small_audit("llama.cpp loading", tutor=endpoint)
        assert audit_run_inline(audit=audit) == Audit.Status.FINISHED
        assert [r.answered for r in server.completions()].count("llamacpp_loading") == 2
    assert not Dialogue.objects.filter(audit=audit).exclude(status=Dialogue.Status.DONE).exists()
    waits = [entry for call in LLMCall.objects.all() for entry in call.attempt_log]
    assert len(waits) == 2 and all("Loading model" in entry["error"] for entry in waits)
    assert all(entry["wait"] >= 1.0 for entry in waits)  # as Retry-After said
