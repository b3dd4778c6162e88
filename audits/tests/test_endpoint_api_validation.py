"""The model-endpoint API refuses what the endpoint form refuses: one set of rules (ModelEndpoint.clean)
for temperature, simulation bias, batch price factor and batch capability, on create and on update."""

import pytest

from audits.models import ModelEndpoint

pytestmark = pytest.mark.django_db

GOOD = {"name": "api-endpoint", "provider": "openai", "model": "m", "base_url": "http://127.0.0.1:9/v1"}


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"temperature": 5}, "temperature"),
        ({"batch_capable": True, "batch_price_factor": "1.5"}, "batch_price_factor"),
        ({"batch_price_factor": "0"}, "batch_price_factor"),
        ({"provider": "simulation", "batch_capable": True}, "batch_capable"),
        ({"provider": "simulation", "simulation_config": {"bias": [{"level": "x"}]}}, "simulation_config"),
        (
            {"provider": "simulation", "simulation_config": {"bias": [{"level": "x", "metric": "m", "shift": "big"}]}},
            "simulation_config",
        ),
        ({"provider": "simulation", "simulation_config": {"judge_bias": {"level": "x"}}}, "simulation_config"),
        (
            {
                "provider": "simulation",
                "simulation_config": {"judge_bias": [{"level": "x", "metric": "no_such_metric", "shift": -1}]},
            },
            "simulation_config",
        ),
        (
            {
                "provider": "simulation",
                "simulation_config": {"judge_bias": [{"level": "x", "metric": "m", "shift": True}]},
            },
            "simulation_config",
        ),
    ],
)
def test_create_and_update_refuse_what_the_form_refuses(researcher_client, change, field):
    refused = researcher_client.post("/api/model-endpoints/", {**GOOD, **change}, content_type="application/json")
    assert refused.status_code == 400 and field in refused.json(), refused.content
    assert not ModelEndpoint.objects.exists()

    created = researcher_client.post("/api/model-endpoints/", GOOD, content_type="application/json")
    assert created.status_code == 201, created.content
    url = f"/api/model-endpoints/{created.json()['id']}/"
    patched = researcher_client.patch(url, change, content_type="application/json")
    assert patched.status_code == 400 and field in patched.json(), patched.content
    assert ModelEndpoint.objects.get().temperature == 0 and not ModelEndpoint.objects.get().batch_capable


def test_a_valid_batch_endpoint_is_accepted(researcher_client):
    made = researcher_client.post(
        "/api/model-endpoints/",
        {**GOOD, "batch_capable": True, "batch_price_factor": "0.5"},
        content_type="application/json",
    )
    assert made.status_code == 201 and made.json()["batch_capable"] is True
