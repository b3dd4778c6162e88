"""The endpoint form takes batch capability and the batch price factor, and refuses a factor that is not a
share of the online price or a simulation marked batch-capable."""

import pytest

from audits.views.endpoints import ModelEndpointForm

BASE = {
    "name": "batch judge",
    "provider": "openai",
    "base_url": "http://127.0.0.1:9/v1",
    "model": "m",
    "temperature": 0,
    "timeout": 60,
    "max_concurrency": 8,
    "extra_params": "{}",
    "simulation_config": "{}",
    "price_input_per_million": 1,
    "price_output_per_million": 2,
    "revision": 1,
}


@pytest.mark.django_db
@pytest.mark.parametrize(
    "change, error_field",
    [
        ({"batch_capable": "on", "batch_price_factor": "0.5"}, None),
        ({"batch_capable": "on", "batch_price_factor": "0"}, "batch_price_factor"),
        ({"batch_price_factor": "1.5"}, "batch_price_factor"),
        ({"batch_capable": "on", "batch_price_factor": "0.5", "provider": "simulation"}, "batch_capable"),
    ],
)
def test_batch_fields_on_the_endpoint_form(change, error_field):
    form = ModelEndpointForm(data={**BASE, **change})
    if error_field is None:
        assert form.is_valid(), form.errors
        endpoint = form.save()
        assert endpoint.batch_capable and float(endpoint.batch_price_factor) == 0.5
    else:
        assert not form.is_valid() and error_field in form.errors
