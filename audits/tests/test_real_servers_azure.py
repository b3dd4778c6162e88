"""Azure OpenAI (classic deployments): `…/openai/deployments/{deployment}/chat/completions?api-version=…`, the key
in an `api-key` header. Set as the README says, an audit runs and every request carries the api-version and the
key where Azure reads it (and nowhere else); without the api-version Azure answers 404 "Resource not found",
which the connection test and the run quote with what to change; a filtered answer (`finish_reason:
"content_filter"`, `content: null`) fails its dialogue at once, saying so."""

import json

import pytest

from audits.models import Audit, Dialogue, LLMCall
from audits.services.batch_judging import batch_client
from audits.services.dialogue_batches import audit_run_inline
from audits.tests.server_emulations import (
    AZURE_API_VERSION,
    AZURE_DEPLOYMENT,
    EmulatedServer,
    api_progress,
    connection_tests,
    emulated_endpoint,
    run_page,
    small_audit,
)

pytestmark = pytest.mark.django_db

AZURE_KEY = "azure-key-3f9a1c0d5e7b"


@pytest.fixture
def azure(monkeypatch, settings):
    settings.AUDIT_RETRY_POLICY = {"max_attempts": 3, "backoff_base": 0.01, "backoff_cap": 0.05}
    monkeypatch.setenv("EDUFAIR_KEY_AZURE", AZURE_KEY)
    with EmulatedServer("azure") as server:
        yield server


def azure_endpoint(server, name="azure gpt-4o", **fields):
    settings = {
        "api_key_env": "EDUFAIR_KEY_AZURE",
        "api_key_header": "api-key",
        "query_params": {"api-version": AZURE_API_VERSION},
        **fields,
    }
    return emulated_endpoint(name, server, model="gpt-4o", **settings)


def test_an_audit_runs_on_azure_with_the_api_version_and_the_key_in_its_header(azure):
    assert azure.base_url.endswith(f"/openai/deployments/{AZURE_DEPLOYMENT}")
    endpoint = azure_endpoint(azure, extra_headers={"x-ms-client-request-tag": "edufair-audit"})
    audit = small_audit("azure", tutor=endpoint)
    assert audit_run_inline(audit=audit) == Audit.Status.FINISHED
    assert not Dialogue.objects.filter(audit=audit).exclude(status=Dialogue.Status.DONE).exists()

    sent = azure.completions()
    assert sent and {r.status for r in sent} == {200}
    for request in sent:
        assert request.path == f"/openai/deployments/{AZURE_DEPLOYMENT}/chat/completions"
        assert request.query == {"api-version": AZURE_API_VERSION}
        assert request.headers["api-key"] == AZURE_KEY
        assert request.headers["x-ms-client-request-tag"] == "edufair-audit"
        # The key goes in the header Azure reads, not also as a bearer token.
        others = {name: value for name, value in request.headers.items() if name != "api-key"}
        assert AZURE_KEY not in json.dumps(others)
    # Nothing of the key is stored.
    for call in LLMCall.objects.all():
        assert AZURE_KEY not in json.dumps(call.request) + (call.response_text or "") + call.error


def test_an_endpoint_without_a_key_header_sends_no_key_header(azure, monkeypatch):
    """The other servers: the key as a bearer token (or a placeholder when none is set), never an `api-key`."""
    with EmulatedServer("vllm") as server:
        monkeypatch.setenv("EDUFAIR_KEY_VLLM", "vllm-key-1234")
        keyed = emulated_endpoint("vllm keyed", server, api_key_env="EDUFAIR_KEY_VLLM")
        keyless = emulated_endpoint("vllm keyless", server)
        audit_run_inline(audit=small_audit("bearer", tutor=keyed, student=keyless, judge=keyless))
        sent = server.completions()
    assert sent
    for request in sent:
        assert "api-key" not in request.headers
        assert request.query == {}
        assert request.headers["authorization"] in ("Bearer vllm-key-1234", "Bearer not-needed")
    assert {r.headers["authorization"] for r in sent if r.purpose == "tutor"} == {"Bearer vllm-key-1234"}
    assert {r.headers["authorization"] for r in sent if r.purpose in ("student", "judge")} == {"Bearer not-needed"}


@pytest.mark.parametrize(
    "fields",
    [
        pytest.param({"query_params": {}}, id="no-api-version"),
        pytest.param({"base_url_deployment": "another-deployment"}, id="unknown-deployment"),
    ],
)
def test_azures_resource_not_found_is_quoted_with_what_to_change(fields, azure, researcher_client):
    deployment = fields.pop("base_url_deployment", None)
    endpoint = azure_endpoint(azure, **fields)
    if deployment:
        endpoint.base_url = azure.base_url.replace(AZURE_DEPLOYMENT, deployment)
        endpoint.save(update_fields=["base_url"])
    audit = small_audit("azure not found", tutor=endpoint)
    audit_run_inline(audit=audit)
    doors = connection_tests(researcher_client, endpoint)

    assert {r.answered for r in azure.completions()} == {"azure_not_found"}
    assert set(Dialogue.objects.filter(audit=audit).values_list("status", flat=True)) == {Dialogue.Status.FAILED}
    places = {
        "dialogue": Dialogue.objects.filter(audit=audit).first().error,
        "run page": run_page(researcher_client, audit),
        "API": api_progress(researcher_client, audit),
        **doors,
    }
    for where, text in places.items():
        assert "Resource not found" in text, where
        assert "api-version" in text and "/openai/deployments/" in text, where  # what to change


def test_a_filtered_answer_fails_its_dialogue_at_once_saying_so(azure):
    azure.fail("content_filter", times=1, purpose="tutor")
    endpoint = azure_endpoint(azure)
    audit = small_audit("azure filtered", tutor=endpoint)
    audit_run_inline(audit=audit)

    filtered = [r for r in azure.completions() if r.answered == "content_filter"]
    assert len(filtered) == 1
    row = LLMCall.objects.get(status=LLMCall.Status.FAILED)
    assert row.attempts == 1 and row.purpose == "tutor"
    assert "content filter" in row.error
    failed = Dialogue.objects.filter(audit=audit, status=Dialogue.Status.FAILED)
    assert failed.exists() and all("content filter" in d.error for d in failed)


def test_the_batch_client_reaches_azure_as_the_online_client_does(azure):
    """The Batch API's files and batches go to the same address with the same key header and api-version; the
    bearer token carries no key."""
    client = batch_client(azure_endpoint(azure, name="azure batch"))
    assert client.default_headers["api-key"] == AZURE_KEY and client.api_key == "not-needed"
    assert client.default_query == {"api-version": AZURE_API_VERSION}
