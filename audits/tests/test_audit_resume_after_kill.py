"""Acceptance 3: SIGKILL the worker in the middle of an audit, start a new one — the audit finishes with
every dialogue exactly once, no duplicate turns or scores, and no model call repeated for work already in
the ledger. Runs on PostgreSQL + Redis in CI (DATABASE_URL / CELERY_BROKER_URL) and on the embedded
SQLite + SQLAlchemy-broker default locally; real worker processes, a real HTTP model server."""

import os
import signal

import pytest
from django.db.models import Count

from audits.judge import METRICS
from audits.models import Audit, Dialogue, LLMCall, Turn, TurnScore
from audits.services.audit_lifecycle import audit_create, audit_launch
from audits.tests.engine_factories import explicit_conditions, make_questions, openai_endpoint
from audits.tests.openai_server import OpenAITestServer, messages_key
from conftest import wait_for

LEASE_SECONDS = 3


@pytest.mark.services
@pytest.mark.slow
def test_a_killed_worker_loses_and_repeats_nothing(celery_worker_process, settings, monkeypatch):
    queue = celery_worker_process.queue
    settings.AUDITS_TASK_QUEUE = queue
    settings.AUDIT_CLAIM_LEASE_SECONDS = LEASE_SECONDS
    # The workers read these from their environment: their own queue, and a short claim lease so the
    # dead worker's claims expire within the test.
    monkeypatch.setenv("CELERY_QUEUE", queue)
    monkeypatch.setenv("AUDIT_CLAIM_LEASE_SECONDS", str(LEASE_SECONDS))

    with OpenAITestServer(delay=0.05) as server:
        tutor = openai_endpoint("kill-tutor", server.base_url, max_concurrency=3)
        other = openai_endpoint("kill-other", server.base_url, max_concurrency=3)
        audit = audit_create(
            name="resume after kill",
            tutors=[tutor],
            student_endpoint=other,
            judge_endpoint=other,
            questions=make_questions(10),
            conditions=explicit_conditions(),
            batch_size=5,
        )
        _, first = celery_worker_process(concurrency=2, name="doomed")
        audit_launch(audit=audit)
        total = Dialogue.objects.filter(audit=audit).count()
        assert total == 30

        # Kill while the worker holds claims, so the takeover path is exercised every time.
        wait_for(
            lambda: (
                Dialogue.objects.filter(audit=audit, status=Dialogue.Status.DONE).count() >= 6
                and Dialogue.objects.filter(audit=audit, status=Dialogue.Status.RUNNING).exists()
            ),
            timeout=60,
            interval=0.05,
            message="the first worker to finish some dialogues while it runs others",
        )
        os.killpg(first.pid, signal.SIGKILL)
        first.wait(timeout=10)
        held_at_kill = set(
            Dialogue.objects.filter(audit=audit, status=Dialogue.Status.RUNNING).values_list("pk", flat=True)
        )
        done_at_kill = Dialogue.objects.filter(audit=audit, status=Dialogue.Status.DONE).count()
        assert done_at_kill < total, "the audit finished before the kill; make it longer"
        ledger_at_kill = {messages_key(c.purpose, c.request["messages"]) for c in LLMCall.objects.filter(status="ok")}
        served_before = len(server.served)

        celery_worker_process(concurrency=2, name="rescuer")
        wait_for(
            lambda: Audit.objects.get(pk=audit.pk).status == Audit.Status.FINISHED,
            timeout=60,
            message="the second worker to finish the audit",
        )

        served_after = server.served[served_before:]

    # Every dialogue exactly once, done.
    dialogues = Dialogue.objects.filter(audit=audit)
    assert dialogues.count() == total
    assert set(dialogues.values_list("status", flat=True)) == {Dialogue.Status.DONE}
    # Dialogues the dead worker held were taken over once their claim expired.
    if held_at_kill:
        assert dialogues.filter(pk__in=held_at_kill, runs__gte=2).exists()
    # No duplicate turns or scores (the constraints would refuse them; check the shape too).
    for dialogue in dialogues:
        indexes = list(dialogue.turns.values_list("index", flat=True))
        assert indexes == list(range(len(indexes)))
    per_turn = TurnScore.objects.filter(turn__dialogue__audit=audit).values("turn").annotate(n=Count("pk"))
    assert {row["n"] for row in per_turn} == {len(METRICS)}
    assert per_turn.count() == Turn.objects.filter(dialogue__audit=audit, role="tutor").count()
    # Nothing already in the ledger at the kill was asked of the server again.
    repeated = [r for r in served_after if r.status == 200 and r.messages_key in ledger_at_kill]
    assert repeated == []
    # And the rescuer did real work: it sent the calls the dead worker had not made.
    assert served_after
