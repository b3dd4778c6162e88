"""The run page's "models the servers reported" is counted once per state of the audit's running totals.

A second view reads no call the dialogues used; a call a dialogue then uses (a model swapped behind the URL) shows at
once."""

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from audits.models import LLMCall
from audits.services.progress_tally import count_new_calls
from audits.tests.engine_factories import scored_audit

pytestmark = pytest.mark.django_db

SWAP_FLAG = '<span class="badge warn">another model</span>'


def use_calls(audit, reported_model: str, n: int) -> None:
    """`n` tutor calls the audit paid for, answered as `reported_model`, each used by one of its dialogues."""
    tutor = audit.tutors.first()
    dialogues = list(audit.dialogues.order_by("pk")[:n])
    calls = LLMCall.objects.bulk_create(
        LLMCall(
            request_hash=f"{audit.pk}-{reported_model}-{i}",
            purpose="tutor",
            endpoint=tutor,
            model=tutor.model,
            reported_model=reported_model,
            request={},
            status="ok",
            first_audit=audit,
        )
        for i in range(n)
    )
    count_new_calls(calls)
    for dialogue, call in zip(dialogues, calls, strict=True):
        dialogue.calls.add(call)


def run_page(client, audit) -> tuple[str, list[str]]:
    with CaptureQueriesContext(connection) as queries:
        response = client.get(reverse("audits:audit-detail", args=[audit.pk]))
    assert response.status_code == 200
    return response.content.decode(), [query["sql"] for query in queries]


def test_reported_models_are_counted_once_per_state_of_the_audits_totals(researcher_client):
    cache.clear()
    audit = scored_audit("reported models", tutors=1, questions=2, dimensions=("first_language",))
    tutor = audit.tutors.first()
    use_calls(audit, tutor.model, 3)
    first, first_queries = run_page(researcher_client, audit)
    assert any("audits_dialogue_calls" in sql for sql in first_queries)
    assert SWAP_FLAG not in first and '<td class="num">3</td>' in first

    again, again_queries = run_page(researcher_client, audit)
    assert not any("audits_dialogue_calls" in sql for sql in again_queries)
    assert again.count("another model") == first.count("another model")

    use_calls(audit, "another-model-7b", 2)  # the server now answers with another model
    swapped, swapped_queries = run_page(researcher_client, audit)
    assert any("audits_dialogue_calls" in sql for sql in swapped_queries)
    assert SWAP_FLAG in swapped and "another-model-7b" in swapped


def test_while_the_audit_runs_the_table_is_recounted_on_a_clock_then_at_once_when_it_stops(
    researcher_client, monkeypatch
):
    """During a run every call moves the totals; a recount per view would read every call the dialogues used
    (1.2 s at 40k dialogues), so the count is kept for a clock period and the page says when it was made."""
    from audits.models import Audit
    from audits.selectors import endpoints

    cache.clear()
    audit = scored_audit("reported models running", tutors=1, questions=2, dimensions=("first_language",))
    Audit.objects.filter(pk=audit.pk).update(status=Audit.Status.RUNNING)
    audit.refresh_from_db()
    tutor = audit.tutors.first()
    use_calls(audit, tutor.model, 3)
    now = [60.0 * 20_000]  # the start of a clock period
    monkeypatch.setattr(endpoints.time, "time", lambda: now[0])

    first, first_queries = run_page(researcher_client, audit)
    assert any("audits_dialogue_calls" in sql for sql in first_queries)
    assert "while the audit runs, recounted\nevery 60 s" in first

    use_calls(audit, "another-model-7b", 2)  # the totals move: while running, that alone does not recount
    now[0] += endpoints.RECOUNT_WHILE_RUNNING_SECONDS - 1
    within, within_queries = run_page(researcher_client, audit)
    assert not any("audits_dialogue_calls" in sql for sql in within_queries)
    assert SWAP_FLAG not in within

    now[0] += 1  # the next clock period
    later, later_queries = run_page(researcher_client, audit)
    assert any("audits_dialogue_calls" in sql for sql in later_queries)
    assert SWAP_FLAG in later

    use_calls(audit, "third-model", 1)
    Audit.objects.filter(pk=audit.pk).update(status=Audit.Status.FINISHED)
    audit.refresh_from_db()
    finished, finished_queries = run_page(researcher_client, audit)
    assert any("audits_dialogue_calls" in sql for sql in finished_queries)
    assert "third-model" in finished and "recounted" not in finished
