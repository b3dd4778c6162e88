"""An endpoint's key variable must be one the operator allows (a prefix, or a provider's usual name): the
hostile client's `api_key_env=SECRET_KEY` (or `DATABASE_URL`) with a listener as base URL is refused when
saved through the form, the API and the admin, and — had it got in some other way — when the client is
built, with nothing sent to the listener. A refusal lists the allowed names and reads the same whether the
variable exists or not."""

import pytest
from django.urls import reverse

from audits.llm.openai_compat import KeyVariableRefused, api_key_for
from audits.llm.outbound_policy import OutboundPolicy, current_policy
from audits.models import ModelEndpoint
from audits.services.batch_judging import batch_client
from audits.tests.engine_factories import openai_endpoint
from audits.tests.openai_server import OpenAITestServer

SECRET = "django-insecure-value-that-must-stay-home"
HOSTILE_NAMES = ["SECRET_KEY", "DATABASE_URL"]


@pytest.fixture(scope="module")
def listener():
    with OpenAITestServer() as server:
        yield server


@pytest.fixture
def secrets_set(monkeypatch):
    for name in HOSTILE_NAMES:
        monkeypatch.setenv(name, SECRET)


def hostile(listener, name: str) -> dict:
    return {"name": f"exfil-{name.lower()}", "provider": "openai", "model": "m", "base_url": listener.base_url,
            "api_key_env": name}  # fmt: skip


def test_the_default_rule_allows_the_prefix_and_provider_names_only():
    policy = OutboundPolicy()
    for name in ["EDUFAIR_KEY_VLLM", "OPENAI_API_KEY", "OPENROUTER_API_KEY", ""]:
        assert policy.key_env_refusal(name) is None, name
    for name in ["SECRET_KEY", "DATABASE_URL", "CELERY_BROKER_URL", "EDUFAIR_KEYX", "AWS_SECRET_ACCESS_KEY"]:
        refusal = policy.key_env_refusal(name)
        assert refusal and "EDUFAIR_KEY_" in refusal and "OPENAI_API_KEY" in refusal, name


def test_a_refusal_reads_the_same_whether_the_variable_exists_or_not(monkeypatch):
    monkeypatch.setenv("SECRET_KEY", SECRET)
    monkeypatch.delenv("NO_SUCH_VARIABLE_HERE", raising=False)
    present = current_policy().key_env_refusal("SECRET_KEY")
    absent = current_policy().key_env_refusal("NO_SUCH_VARIABLE_HERE")
    assert present.replace("SECRET_KEY", "X") == absent.replace("NO_SUCH_VARIABLE_HERE", "X")
    assert "not set" not in present and SECRET not in present


@pytest.mark.django_db
@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_the_api_refuses_a_secret_variable_on_create_and_update(researcher_client, listener, secrets_set, name):
    refused = researcher_client.post("/api/model-endpoints/", hostile(listener, name), content_type="application/json")
    assert refused.status_code == 400 and "api_key_env" in refused.json(), refused.content
    message = " ".join(refused.json()["api_key_env"])
    assert "EDUFAIR_KEY_" in message and SECRET not in refused.content.decode()
    assert not ModelEndpoint.objects.exists()

    made = researcher_client.post(
        "/api/model-endpoints/",
        {**hostile(listener, name), "api_key_env": "EDUFAIR_KEY_LAB"},
        content_type="application/json",
    )
    assert made.status_code == 201, made.content
    patched = researcher_client.patch(
        f"/api/model-endpoints/{made.json()['id']}/", {"api_key_env": name}, content_type="application/json"
    )
    assert patched.status_code == 400 and "api_key_env" in patched.json()
    assert ModelEndpoint.objects.get().api_key_env == "EDUFAIR_KEY_LAB"
    assert all(SECRET not in header for header in listener.state.authorizations)


@pytest.mark.django_db
@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_the_form_refuses_a_secret_variable(researcher_client, listener, secrets_set, name):
    form = {**hostile(listener, name), "temperature": 0, "timeout": 60, "max_concurrency": 8, "revision": 1,
            "extra_params": "{}", "simulation_config": "{}", "price_input_per_million": 0,
            "price_output_per_million": 0, "batch_price_factor": 0.5}  # fmt: skip
    response = researcher_client.post(reverse("audits:endpoint-new"), form)
    assert response.status_code == 200  # the form again, with the error
    assert "is not a variable an endpoint may send" in response.content.decode()
    assert not ModelEndpoint.objects.exists()

    form["api_key_env"] = "EDUFAIR_KEY_LAB"  # bound to loopback in the tests' settings (conftest.py)
    assert researcher_client.post(reverse("audits:endpoint-new"), form).status_code == 302
    assert ModelEndpoint.objects.get().api_key_env == "EDUFAIR_KEY_LAB"


@pytest.mark.django_db
def test_the_admin_refuses_a_secret_variable(admin_client, listener, secrets_set):
    form = {**hostile(listener, "SECRET_KEY"), "temperature": 0, "timeout": 60, "max_concurrency": 8,
            "revision": 1, "extra_params": "{}", "simulation_config": "{}", "price_input_per_million": 0,
            "price_output_per_million": 0, "batch_price_factor": 0.5}  # fmt: skip
    response = admin_client.post(reverse("admin:audits_modelendpoint_add"), form)
    assert response.status_code == 200 and "is not a variable an endpoint may send" in response.content.decode()
    assert not ModelEndpoint.objects.exists()


@pytest.mark.django_db
@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_a_secret_variable_that_got_in_is_never_read_nor_sent(researcher_client, listener, secrets_set, name):
    """Written past the rules (an older row, a raw update): the connection test, an audit's client and the
    Batch API client all refuse it before reading the variable, and the listener hears nothing."""
    endpoint = openai_endpoint(f"old-{name}", listener.base_url)
    ModelEndpoint.objects.filter(pk=endpoint.pk).update(api_key_env=name)
    endpoint.refresh_from_db()
    served = len(listener.state.served)

    tested = researcher_client.post(f"/api/model-endpoints/{endpoint.pk}/test-connection/")
    assert tested.status_code == 200 and tested.json()["ok"] is False
    assert "is not a variable an endpoint may send" in tested.json()["message"]
    assert SECRET not in tested.content.decode() and "not set" not in tested.json()["message"]

    with pytest.raises(KeyVariableRefused):
        api_key_for(endpoint.to_config())
    with pytest.raises(KeyVariableRefused):
        batch_client(endpoint)
    assert len(listener.state.served) == served
    assert all(SECRET not in header for header in listener.state.authorizations)


@pytest.mark.django_db
def test_the_operator_extends_the_allowed_names(researcher_client, listener, settings):
    settings.EDUFAIR_LLM_KEY_ENV_NAMES = ["LAB_VLLM_TOKEN"]
    settings.EDUFAIR_LLM_KEY_HOSTS = ["LAB_VLLM_TOKEN=127.0.0.1"]
    made = researcher_client.post(
        "/api/model-endpoints/", hostile(listener, "LAB_VLLM_TOKEN"), content_type="application/json"
    )
    assert made.status_code == 201, made.content

    settings.EDUFAIR_LLM_KEY_ENV_PREFIX = "LAB_KEY_,TEAM_KEY_"
    assert current_policy().key_env_refusal("TEAM_KEY_JUDGE") is None
    assert current_policy().key_env_refusal("EDUFAIR_KEY_JUDGE")  # the default prefix was replaced
