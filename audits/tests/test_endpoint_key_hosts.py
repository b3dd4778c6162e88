"""A key goes only to the hosts its variable is bound to: `OPENAI_API_KEY` only to api.openai.com (the providers'
bindings are the defaults), an operator's own variable only where `EDUFAIR_LLM_KEY_HOSTS` binds it. A listener on
another loopback address (127.0.0.2) is refused when the endpoint is saved — through the API, the form and the
admin — and, when the host was changed past the rules, at the call: the connection test, an audit's client and the
Batch API client refuse before reading the variable, and the listener hears nothing."""

import pytest
from django.urls import reverse

from audits.llm.openai_compat import KeyVariableRefused, api_key_for
from audits.llm.outbound_policy import OutboundPolicy, policy_from
from audits.models import ModelEndpoint
from audits.services.batch_judging import batch_client
from audits.tests.engine_factories import openai_endpoint
from audits.tests.openai_server import OpenAITestServer

KEY = "sk-operator-key-that-stays-with-its-provider"
BOUND = "EDUFAIR_KEY_LAB"  # bound to 127.0.0.1|localhost by conftest.py, as an operator binds theirs


@pytest.fixture(scope="module")
def elsewhere():
    """A listener on another loopback address: reachable (the tests allow loopback) but not a bound host."""
    with OpenAITestServer(host="127.0.0.2") as server:
        yield server


def bound_host(server) -> str:
    return server.base_url.replace("127.0.0.2", "127.0.0.1")


@pytest.fixture
def keys_set(monkeypatch):
    for name in ("OPENAI_API_KEY", BOUND):
        monkeypatch.setenv(name, KEY)


def test_the_providers_keys_are_bound_to_their_own_hosts():
    policy = OutboundPolicy()
    assert policy.key_host_refusal("OPENAI_API_KEY", "") is None  # the SDK's default base URL
    assert policy.key_host_refusal("OPENAI_API_KEY", "https://api.openai.com/v1") is None
    assert policy.key_host_refusal("AZURE_OPENAI_API_KEY", "https://lab.openai.azure.com/openai") is None
    assert policy.key_host_refusal("OPENROUTER_API_KEY", "https://openrouter.ai/api/v1") is None
    refusal = policy.key_host_refusal("OPENAI_API_KEY", "https://api.openai.com.evil.example/v1")
    assert refusal.startswith("OPENAI_API_KEY may be sent only to api.openai.com, not to api.openai.com.evil.example")
    assert "EDUFAIR_LLM_KEY_HOSTS" in refusal
    assert policy.key_host_refusal("OPENROUTER_API_KEY", "https://api.openai.com/v1")
    # A self-hosted server's key and the operator's own variables go nowhere until bound.
    assert "VLLM_API_KEY is bound to no host" in policy.key_host_refusal("VLLM_API_KEY", "http://10.0.0.5:8000/v1")
    assert policy.key_host_refusal("EDUFAIR_KEY_X", "https://api.openai.com/v1")
    assert policy.key_host_refusal("", "https://anywhere.example/v1") is None  # no key, nothing to keep


def test_the_operator_binds_and_rebinds_variables():
    policy = policy_from(
        {
            "EDUFAIR_LLM_KEY_HOSTS": "VLLM_API_KEY=10.0.0.5|gpu.lab.example.org, EDUFAIR_KEY_ANY=*, "
            "OPENAI_API_KEY=.proxy.example.org"
        }  # fmt: skip
    )
    assert policy.key_host_refusal("VLLM_API_KEY", "http://10.0.0.5:8000/v1") is None
    assert policy.key_host_refusal("VLLM_API_KEY", "http://GPU.lab.example.org./v1") is None
    assert policy.key_host_refusal("VLLM_API_KEY", "http://10.0.0.6:8000/v1")
    assert policy.key_host_refusal("EDUFAIR_KEY_ANY", "https://anywhere.example/v1") is None
    # A binding replaces the provider's default: the operator routes OpenAI's key through their own proxy only.
    assert policy.key_host_refusal("OPENAI_API_KEY", "https://eu.proxy.example.org/v1") is None
    assert policy.key_host_refusal("OPENAI_API_KEY", "https://api.openai.com/v1")
    for bad in ("VLLM_API_KEY", "=host", "VLLM_API_KEY=", "VLLM_API_KEY=not a host"):
        with pytest.raises(ValueError, match="EDUFAIR_LLM_KEY_HOSTS"):
            policy_from({"EDUFAIR_LLM_KEY_HOSTS": bad})


def endpoint_body(server, name: str, key_env: str) -> dict:
    return {"name": name, "provider": "openai", "model": "m", "base_url": server.base_url, "api_key_env": key_env}


FORM_DEFAULTS = {"temperature": 0, "timeout": 60, "max_concurrency": 8, "revision": 1, "extra_params": "{}",
                 "simulation_config": "{}", "price_input_per_million": 0, "price_output_per_million": 0,
                 "batch_price_factor": 0.5}  # fmt: skip


@pytest.mark.django_db
@pytest.mark.parametrize("key_env", ["OPENAI_API_KEY", BOUND])
def test_saving_a_key_with_an_unbound_host_is_refused_on_every_door(
    researcher_client, admin_client, elsewhere, keys_set, key_env
):
    body = endpoint_body(elsewhere, "exfil", key_env)
    refused = researcher_client.post("/api/model-endpoints/", body, content_type="application/json")
    assert refused.status_code == 400, refused.content
    assert f"{key_env} may be sent only to" in " ".join(refused.json()["base_url"])
    page = researcher_client.post(reverse("audits:endpoint-new"), {**body, **FORM_DEFAULTS})
    assert page.status_code == 200 and f"{key_env} may be sent only to" in page.content.decode()
    admin = admin_client.post(reverse("admin:audits_modelendpoint_add"), {**body, **FORM_DEFAULTS})
    assert admin.status_code == 200 and f"{key_env} may be sent only to" in admin.content.decode()
    assert not ModelEndpoint.objects.exists()

    # An update that moves a keyed endpoint to another host is refused the same way.
    made = openai_endpoint("lab", bound_host(elsewhere), api_key_env=BOUND)
    moved = researcher_client.patch(
        f"/api/model-endpoints/{made.pk}/", {"base_url": elsewhere.base_url}, content_type="application/json"
    )
    assert moved.status_code == 400 and "base_url" in moved.json()
    made.refresh_from_db()
    assert made.base_url == bound_host(elsewhere)
    assert not elsewhere.state.authorizations and not elsewhere.served


@pytest.mark.django_db
def test_a_host_changed_past_the_rules_is_refused_at_the_call(researcher_client, elsewhere, keys_set):
    endpoint = openai_endpoint("moved", bound_host(elsewhere), api_key_env=BOUND)
    ModelEndpoint.objects.filter(pk=endpoint.pk).update(base_url=elsewhere.base_url)
    endpoint.refresh_from_db()
    served = len(elsewhere.served)

    tested = researcher_client.post(f"/api/model-endpoints/{endpoint.pk}/test-connection/")
    assert tested.status_code == 200 and tested.json()["ok"] is False
    assert f"{BOUND} may be sent only to 127.0.0.1, localhost, not to 127.0.0.2" in tested.json()["message"]
    with pytest.raises(KeyVariableRefused, match="not to 127.0.0.2"):
        api_key_for(endpoint.to_config())
    with pytest.raises(KeyVariableRefused, match="not to 127.0.0.2"):
        batch_client(endpoint)
    assert len(elsewhere.served) == served == 0
    assert not elsewhere.state.authorizations
