"""A worker loads the client library its endpoints need when it starts (audits/tasks.py, worker_ready →
audits.services.dialogue_batches.engine_preload), on a thread, so the first model call does not stall the
event loop and every dialogue on it while the openai SDK imports (benchmarks/RESULTS.md, engine throughput)."""

import sys

import pytest

from audits.llm.client import PROVIDER_MODULES, providers_preload
from audits.services.dialogue_batches import engine_preload
from audits.tests.engine_factories import openai_endpoint, simulation_endpoint

pytestmark = pytest.mark.django_db


def test_a_worker_whose_endpoints_are_all_simulated_loads_nothing():
    simulation_endpoint("preload-sim")
    assert engine_preload() is None


def test_a_worker_with_an_openai_endpoint_imports_the_sdk_module_on_a_thread():
    simulation_endpoint("preload-sim")
    openai_endpoint("preload-real", "http://127.0.0.1:9/v1")
    thread = engine_preload()
    assert thread is not None and thread.name == "edufair-provider-preload"
    thread.join(30)
    assert not thread.is_alive()
    assert PROVIDER_MODULES["openai"] in sys.modules


def test_unknown_providers_and_no_providers_start_no_thread():
    assert providers_preload(set()) is None
    assert providers_preload({"simulation"}) is None
