"""audits.services.ledger: operations asked at once share rounds once rounds queue up, and each still gets
its own answer; a lone operation is a round of its own."""

import asyncio

import pytest
from django.db import connections

from audits.llm.calls import STATUS_OK, CallRequest, CallResult, EndpointConfig
from audits.llm.runtime import CallerThreadExecutor, LoopRuntime
from audits.models import LLMCall
from audits.services.ledger import DatabaseLedger
from audits.tests.engine_factories import simulation_endpoint

pytestmark = pytest.mark.django_db


def test_concurrent_operations_share_rounds_and_get_their_own_answers():
    endpoint = simulation_endpoint("ledger")
    config = EndpointConfig(key="e", provider="simulation", model=endpoint.model, endpoint_id=endpoint.pk)
    runtime = LoopRuntime(name="ledger-test")
    runtime.blocking = CallerThreadExecutor()  # the ledger's rounds on this thread, in the test's transaction
    ledger = DatabaseLedger(runtime)
    requests = [
        CallRequest(endpoint=config, purpose="tutor", messages=[{"role": "user", "content": str(n)}]) for n in range(60)
    ]

    async def go():
        ids = await asyncio.gather(
            *(
                ledger.record(r, f"hash-{n}", CallResult(ok=True, text=f"answer {n}", attempts=1), [])
                for n, r in enumerate(requests)
            )
        )
        lone = ledger.rounds
        found = await asyncio.gather(*(ledger.lookup(f"hash-{n}") for n in range(60)), ledger.lookup("missing"))
        return ids, lone, found

    try:
        ids, rounds_after_writes, found = runtime.run(go)
    finally:
        runtime.blocking.submit(connections.close_all).result()
        runtime.stop()
    assert len(set(ids)) == 60 and LLMCall.objects.count() == 60
    assert rounds_after_writes < 60  # sixty writes asked at once did not take sixty rounds
    assert [row.text for row in found[:60]] == [f"answer {n}" for n in range(60)]
    assert all(row.status == STATUS_OK and row.call_id == ids[n] for n, row in enumerate(found[:60]))
    assert found[60] is None
