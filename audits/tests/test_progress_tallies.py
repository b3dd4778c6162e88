"""The live panel's running totals (audits.models.progress): after a run with failed calls, retries, re-asked judges,
answers served from the ledger, a retry of the failed dialogues and a re-judging, each total equals a recount from the
rows; and what the panel reads does not grow with the audit (a fixed number of queries, none on the ledger, the turns
or the scores, and none counting the dialogues)."""

import pytest
from django.db import connection
from django.db.models import Count, F, FloatField, Q, Sum
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from audits.models import Audit, AuditCallTally, AuditTally, Dialogue, LLMCall, ModelEndpoint, Turn
from audits.selectors.runs import audit_progress
from audits.services.audit_lifecycle import audit_create, audit_retry_failed
from audits.services.dialogue_batches import audit_run_inline
from audits.services.judging import audit_turns_rejudge_run
from audits.services.progress_tally import count_new_calls
from audits.tests.engine_factories import explicit_conditions, make_questions, openai_endpoint, scored_audit
from audits.tests.openai_server import Fault, OpenAITestServer


def ledger_recount(audit: Audit) -> dict:
    """The panel's numbers as it read them from the ledger and the turns before they were kept: the independent
    reference (Django aggregates over the rows)."""
    paid = LLMCall.objects.filter(first_audit=audit)
    totals = paid.aggregate(
        calls=Count("pk"),
        ok=Count("pk", filter=Q(status=LLMCall.Status.OK)),
        unparsable=Count("pk", filter=Q(status=LLMCall.Status.UNPARSABLE)),
        attempts=Sum("attempts"),
        prompt_tokens=Sum("prompt_tokens"),
        completion_tokens=Sum("completion_tokens"),
        reasoning_tokens=Sum("reasoning_tokens"),
    )
    per_endpoint = paid.values("endpoint").annotate(
        billed_prompt=Sum(F("prompt_tokens") * F("price_factor"), output_field=FloatField()),
        billed_completion=Sum(F("completion_tokens") * F("price_factor"), output_field=FloatField()),
        n=Count("pk"),
        prompt=Sum("prompt_tokens"),
        completion=Sum("completion_tokens"),
    )
    cost_rows = []
    for row in per_endpoint.order_by("endpoint"):
        endpoint = ModelEndpoint.objects.get(pk=row["endpoint"])
        cost = endpoint.cost(row["billed_prompt"] or 0, row["billed_completion"] or 0)
        cost_rows.append((str(endpoint), row["n"], row["prompt"] or 0, row["completion"] or 0, cost))
    turns = dict(
        Turn.objects.filter(dialogue__audit=audit)
        .exclude(judge_status="")
        .values_list("judge_status")
        .annotate(n=Count("pk"))
        .values_list("judge_status", "n")
    )
    by_status = dict(audit.dialogues.values_list("status").annotate(n=Count("pk")).values_list("status", "n"))
    calls = totals["calls"]
    return {
        **{status: by_status.get(status, 0) for status in Dialogue.Status.values},
        "total": sum(by_status.values()),
        "calls_reused": audit.dialogues.aggregate(n=Sum("calls_cached"))["n"] or 0,
        "calls_sent": calls,
        "calls_failed": calls - totals["ok"] - totals["unparsable"],
        "calls_unparsable": totals["unparsable"],
        "retries": (totals["attempts"] or 0) - calls,
        "prompt_tokens": totals["prompt_tokens"] or 0,
        "completion_tokens": totals["completion_tokens"] or 0,
        "reasoning_tokens": totals["reasoning_tokens"] or 0,
        "cost_by_endpoint": sorted(cost_rows),
        "turns_scored": turns.get(Turn.JudgeStatus.OK, 0),
        "turns_unparsable": turns.get(Turn.JudgeStatus.UNPARSABLE, 0),
        "turns_judge_failed": turns.get(Turn.JudgeStatus.FAILED, 0),
    }


def panel_numbers(audit: Audit) -> dict:
    progress = audit_progress(audit=audit)
    reference = ledger_recount(audit)
    found = {name: progress[name] for name in reference if name != "cost_by_endpoint"}
    found["cost_by_endpoint"] = sorted(
        (r["endpoint"], r["calls"], r["prompt_tokens"], r["completion_tokens"], r["cost"])
        for r in progress["cost_by_endpoint"]
    )
    return found


def assert_tallies_match_rows(audit: Audit) -> dict:
    reference = ledger_recount(audit)
    assert panel_numbers(audit) == reference
    return reference


@pytest.mark.django_db(transaction=True)
def test_the_totals_equal_a_recount_after_failures_retries_reuse_and_rejudging(settings):
    settings.AUDIT_RETRY_POLICY = {"max_attempts": 2, "backoff_base": 0.01, "backoff_cap": 0.02}
    with OpenAITestServer() as server:
        # Question 0's first tutor request fails twice (one failed call, its three dialogues failed); another tutor
        # request fails once and is retried; a judge answers prose to every ask about one turn (unparsable, its
        # ledger rows rejected); another judge reply is truncated once, then re-asked.
        server.plan("tutor", *[Fault("500", match=("3 rows of 4",))] * 2, "500")
        first_turn_of_q1 = ("4 rows of 6", "Tutor turn to rate:\nLet's slow down")
        server.plan("judge", *[Fault("prose", match=first_turn_of_q1)] * 3, "truncated")
        tutor = openai_endpoint("tally-tutor", server.base_url)
        student = openai_endpoint("tally-student", server.base_url)
        judge = openai_endpoint("tally-judge", server.base_url)
        audit = audit_create(
            name="tallies",
            tutors=[tutor],
            student_endpoint=student,
            judge_endpoint=judge,
            questions=make_questions(3),
            conditions=explicit_conditions(),
            max_reasks=2,
        )
        assert audit_run_inline(audit=audit) == Audit.Status.FINISHED
        first = assert_tallies_match_rows(audit)
        # What the run went through, so the recount above compares something.
        assert first["calls_failed"] >= 1 and first["retries"] >= 2 and first["calls_unparsable"] >= 1
        assert first["turns_unparsable"] >= 1 and first["turns_scored"] > 0
        assert Dialogue.objects.filter(audit=audit, status=Dialogue.Status.FAILED).count() == 3
        assert sum(Dialogue.objects.filter(audit=audit).values_list("calls_cached", flat=True)) > 0

        # The failed dialogues again: their turns go, the failed ledger row is retried (the same row now answered).
        audit_retry_failed(audit=audit)
        assert audit_run_inline(audit=audit) == Audit.Status.FINISHED
        second = assert_tallies_match_rows(audit)
        assert second["calls_failed"] == 0 and second["retries"] > first["retries"]

        # Re-judging the unparsable turns changes their verdicts (and adds paid judge calls).
        assert audit_turns_rejudge_run(audit_id=audit.pk)["turns"] == first["turns_unparsable"]
        third = assert_tallies_match_rows(audit)
        assert third["turns_unparsable"] == 0 and third["turns_scored"] > second["turns_scored"]

        # The same audit again, from the ledger: nearly every call reused; the first audit's totals unchanged.
        again = audit_create(
            name="tallies again",
            tutors=[tutor],
            student_endpoint=student,
            judge_endpoint=judge,
            questions=list(audit.questions.order_by("pk")),
            conditions=explicit_conditions(),
            max_reasks=2,
        )
        assert audit_run_inline(audit=again) == Audit.Status.FINISHED
        # (Only the judge's requests whose answer was unparsable go out again.)
        assert audit_progress(audit=again)["calls_reused"] > 10 * assert_tallies_match_rows(again)["calls_sent"]
        assert assert_tallies_match_rows(audit) == third

    # Deleting the audit takes its totals with it.
    Audit.objects.filter(pk=audit.pk).delete()
    assert not AuditCallTally.objects.filter(audit_id=audit.pk).exists()
    assert not AuditTally.objects.filter(audit_id=audit.pk).exists()


def panel_queries(client, audit: Audit) -> list[str]:
    audit = Audit.objects.get(pk=audit.pk)  # as a request reads it: nothing cached on the object
    with CaptureQueriesContext(connection) as captured:
        audit_progress(audit=audit)
        assert client.get(reverse("audits:audit-progress", args=[audit.pk])).status_code == 200
    return [query["sql"] for query in captured.captured_queries]


@pytest.mark.django_db
def test_what_the_live_panel_reads_does_not_grow_with_the_audit(researcher_client):
    small = scored_audit("small panel", tutors=1, questions=2, dimensions=("first_language",))
    large = scored_audit("large panel", tutors=2, questions=6, dimensions=("first_language", "gender"))
    assert large.dialogues.count() > 5 * small.dialogues.count()
    # Both audits paid for calls (the ledger holds rows of each, counted as the ledger counts them).
    for audit in (small, large):
        calls = [
            LLMCall(
                request_hash=f"{audit.pk}-{i}", purpose="tutor", model="m", request={}, status="ok", first_audit=audit
            )
            for i in range(3 * audit.dialogues.count())
        ]
        count_new_calls(LLMCall.objects.bulk_create(calls))
    panel_queries(researcher_client, small)  # the session and the user, read once
    small_queries = panel_queries(researcher_client, small)
    large_queries = panel_queries(researcher_client, large)
    assert len(small_queries) == len(large_queries)
    for sql in large_queries:
        assert "audits_llmcall" not in sql and '"audits_turn"' not in sql and '"audits_turnscore"' not in sql
        assert not ('FROM "audits_dialogue"' in sql and ("COUNT(" in sql or "SUM(" in sql)), sql
    progress = audit_progress(audit=large)
    assert progress["calls_sent"] == 3 * large.dialogues.count()
    assert progress["turns_scored"] == Turn.objects.filter(dialogue__audit=large, judge_status="ok").count() > 0
