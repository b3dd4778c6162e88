"""An audit over HTTP through a fault-injecting proxy in front of the local
OpenAI-protocol server — 429 with Retry-After, 500, answers slower than the timeout, truncated JSON, HTML
with status 200 (each 10 % of requests), and judge replies (20 %) and reveal-check replies (15 %) in prose.

Every dialogue ends done or failed with a recorded error, none lost to an exception, and the proxy saw
exactly the attempts the ledger records. After the faults stop, "retry failed" and "re-judge" bring the
audit to every dialogue done and every tutor turn scored, and no ledger row recorded unparsable was
ever served from the ledger.
"""

import logging

import pytest

from audits.models import Audit, Dialogue, LLMCall, Turn, TurnScore
from audits.selectors.runs import audit_progress
from audits.services import judging, ledger
from audits.services.audit_lifecycle import audit_create, audit_retry_failed
from audits.services.dialogue_batches import audit_run_inline
from audits.tests.engine_factories import explicit_conditions, make_questions, openai_endpoint
from audits.tests.fault_proxy import FaultProxy
from audits.tests.openai_server import OpenAITestServer

pytestmark = pytest.mark.django_db(transaction=True)

RATES = {
    "429": 0.10,
    "500": 0.10,
    "slow": 0.10,
    "truncated": 0.10,
    "html": 0.10,
    "judge_prose": 0.20,
    "check_prose": 0.15,
}
# How a dialogue may fail: a model call that ran out of attempts, or a reveal check that never parsed.
DIALOGUE_ERRORS = ("student call failed", "tutor call failed", "reveal check failed", "reveal check unparsable")


@pytest.fixture
def served_from_ledger(monkeypatch):
    """Every row the ledger served (row id, status at that moment)."""
    served = []
    lookup = ledger._lookup_many

    def spy(keys):
        found = lookup(keys)
        served.extend(row.call_id for row in found.values() if row.ok)
        return found

    monkeypatch.setattr(ledger, "_lookup_many", spy)
    return served


def test_every_fault_ends_in_a_recorded_outcome_and_retry_plus_rejudge_completes_the_audit(
    settings, monkeypatch, caplog, served_from_ledger
):
    settings.AUDIT_RETRY_POLICY = {"max_attempts": 4, "backoff_base": 0.01, "backoff_cap": 0.05, "max_retry_after": 5}
    # Retrying and re-judging run in this process, as a worker would run the tasks they queue.
    monkeypatch.setattr("audits.tasks.audit_run_batch_task.apply_async", lambda *a, **k: None)
    monkeypatch.setattr(
        "audits.tasks.audit_turns_rejudge_task.apply_async",
        lambda args, **kw: judging.audit_turns_rejudge_run(audit_id=args[0]),
    )
    caplog.set_level(logging.ERROR, logger="audits.services.dialogue_batches")
    with OpenAITestServer() as server, FaultProxy(server.base_url, rates=RATES, seed=1, hang=1.0) as proxy:
        server.state.distinct_students = True  # no two dialogues share a request: each fault hits one dialogue
        tutor = openai_endpoint("proxy-tutor", proxy.base_url, timeout=0.5)
        student = openai_endpoint("proxy-student", proxy.base_url, timeout=0.5)
        judge = openai_endpoint("proxy-judge", proxy.base_url, timeout=0.5)
        audit = audit_create(
            name="fault drill",
            tutors=[tutor],
            student_endpoint=student,
            judge_endpoint=judge,
            questions=make_questions(4, prefix="drill15"),
            conditions=explicit_conditions(),
            t_max=3,
            max_reasks=1,
        )

        # --- under fire ---------------------------------------------------------------------------
        assert audit_run_inline(audit=audit) == Audit.Status.FINISHED
        dialogues = list(Dialogue.objects.filter(audit=audit))
        assert len(dialogues) == 12
        assert {d.status for d in dialogues} <= {Dialogue.Status.DONE, Dialogue.Status.FAILED}
        failed = [d for d in dialogues if d.status == Dialogue.Status.FAILED]
        assert all(d.error.startswith(DIALOGUE_ERRORS) for d in failed), [d.error for d in failed]
        assert not [r for r in caplog.records if "raised" in r.getMessage()]  # none lost to an exception
        faults = proxy.faults()
        assert set(faults) == set(RATES), faults  # each fault happened
        # Every request the proxy received is an attempt in the ledger, with its error when it failed.
        assert len(proxy.served) == sum(LLMCall.objects.values_list("attempts", flat=True))
        errors = " | ".join(e["error"] for c in LLMCall.objects.all() for e in c.attempt_log)
        for expected in ("HTTP 429", "HTTP 500", "timed out", "not valid JSON", "not JSON but text"):
            assert expected in errors
        unparsable = LLMCall.objects.filter(status=LLMCall.Status.UNPARSABLE)
        assert set(unparsable.values_list("purpose", flat=True)) == {"judge", "check"}
        assert all(row.response_text and row.error.startswith("unparsable: ") for row in unparsable)
        progress = audit_progress(audit=audit)
        assert progress["calls_unparsable"] == unparsable.count()
        assert progress["failed"] == len(failed)
        # The judge's trouble is visible on the audit: unparsable and failed turns (of done dialogues; a
        # failed dialogue is not judged).
        to_rejudge = judging.audit_turns_to_rejudge(audit=audit).count()
        assert to_rejudge == progress["turns_unparsable"] + progress["turns_judge_failed"]
        assert failed and progress["turns_unparsable"] and progress["turns_judge_failed"]

        # --- the faults stop: retry failed dialogues, then re-judge -------------------------------
        proxy.stop_faults()
        before_phase_two = len(proxy.served)
        audit_retry_failed(audit=audit)
        assert audit_run_inline(audit=audit) == Audit.Status.FINISHED
        # Turns of the retried dialogues are judged with them; what is left is what the first run left.
        assert judging.audit_turns_rejudge(audit=audit) == to_rejudge

        assert set(Dialogue.objects.filter(audit=audit).values_list("status", flat=True)) == {Dialogue.Status.DONE}
        tutor_turns = Turn.objects.filter(dialogue__audit=audit, role=Turn.Role.TUTOR)
        assert set(tutor_turns.values_list("judge_status", flat=True)) == {Turn.JudgeStatus.OK}
        scores = TurnScore.objects.filter(turn__dialogue__audit=audit, rubric=audit.judge_template)
        assert scores.count() == 5 * tutor_turns.count()
        assert set(scores.values_list("status", flat=True)) == {TurnScore.Status.OK}
        assert not scores.filter(value__isnull=True).exists()
        # Every score came from an answer that parsed, never from one recorded unparsable.
        assert not scores.filter(judge_call__status=LLMCall.Status.UNPARSABLE).exists()

        # No row recorded unparsable was ever served from the ledger, and the re-asks were real requests.
        unparsable_ids = set(LLMCall.objects.filter(status=LLMCall.Status.UNPARSABLE).values_list("pk", flat=True))
        assert served_from_ledger and not unparsable_ids & set(served_from_ledger)
        assert len(proxy.served) > before_phase_two
        assert len(proxy.served) == sum(LLMCall.objects.values_list("attempts", flat=True))
        final = audit_progress(audit=audit)
        assert final["turns_unparsable"] == final["turns_judge_failed"] == final["failed"] == 0
