"""Acceptance 5: a finished audit re-judged under a new rubric version through the Batch API, with the
worker SIGKILLed after it created the batch and another worker started: the successor polls the same
batch (none created twice), every turn is judged once under the new rubric, and no line and no chat call
is asked twice. Real worker processes, a real local files + batches server."""

import os
import signal

import pytest
from django.db.models import Count

from audits.judge import METRICS
from audits.models import Dialogue, JudgeBatch, JudgeRun, LLMCall, Turn, TurnScore
from audits.services.audit_lifecycle import audit_create
from audits.services.design import prompt_template_revise
from audits.services.dialogue_batches import audit_run_inline
from audits.services.judge_runs import audit_rejudge_open
from audits.tests.engine_factories import explicit_conditions, make_questions, openai_endpoint
from audits.tests.openai_batch_server import BatchTestServer
from conftest import wait_for

LEASE_SECONDS = 2


@pytest.mark.services
@pytest.mark.slow
def test_batch_rejudge_survives_a_killed_worker(celery_worker_process, settings, monkeypatch):
    queue = celery_worker_process.queue
    settings.AUDITS_TASK_QUEUE = queue
    for name, value in {
        "CELERY_QUEUE": queue,
        "JUDGE_RUN_LEASE_SECONDS": str(LEASE_SECONDS),
        "JUDGE_BATCH_POLL_SECONDS": "0.2",
    }.items():
        monkeypatch.setenv(name, value)

    with BatchTestServer(batch_seconds=3.0) as server:
        tutor = openai_endpoint("kill-batch-tutor", server.base_url, max_concurrency=4)
        other = openai_endpoint("kill-batch-other", server.base_url, max_concurrency=4)
        audit = audit_create(
            name="batch re-judge after a kill",
            tutors=[tutor],
            student_endpoint=other,
            judge_endpoint=other,
            questions=make_questions(3),
            conditions=explicit_conditions(),
        )
        assert audit_run_inline(audit=audit) == "finished"
        audit.refresh_from_db()
        judge = openai_endpoint("kill-batch-judge", server.base_url, batch_capable=True)
        rubric = prompt_template_revise(
            template=audit.judge_template, text=audit.judge_template.text + "\nJudge strictly.", description="v2"
        )
        chat_before = len(server.served)
        turns = Turn.objects.filter(dialogue__audit=audit, dialogue__status=Dialogue.Status.DONE, role="tutor")

        _, first = celery_worker_process(concurrency=2, name="doomed")
        run = audit_rejudge_open(audit=audit, judge_template=rubric, judge_endpoint=judge)
        wait_for(
            lambda: JudgeBatch.objects.filter(run=run).exclude(provider_batch_id="").exists(),
            timeout=60,
            message="the first worker to create the batch",
            processes=[first],
        )
        os.killpg(first.pid, signal.SIGKILL)
        first.wait(timeout=10)
        batch = JudgeBatch.objects.get(run=run)
        assert batch.status != JudgeBatch.Status.COLLECTED, "the batch ended before the kill; make it longer"
        assert server.batches_created == 1

        celery_worker_process(concurrency=2, name="rescuer")
        wait_for(
            lambda: JudgeRun.objects.get(pk=run.pk).status == JudgeRun.Status.DONE,
            timeout=90,
            message="the second worker to finish the run",
        )
        lines = server.lines_answered
        created = server.batches_created
        chat_after = len(server.served)

    run.refresh_from_db()
    assert run.runs == 2 and run.judged == run.total == turns.count()
    # The successor polled the batch the dead worker created: one batch, every line answered once.
    assert created == 1
    assert JudgeBatch.objects.filter(run=run).count() == 1
    batch.refresh_from_db()
    assert batch.status == JudgeBatch.Status.COLLECTED and batch.answered == batch.lines
    assert set(lines.values()) == {1} and len(lines) == batch.lines
    # No chat call was made for the re-judge.
    assert chat_after == chat_before
    # Every turn judged once under the new rubric, all scored; the answers were paid at the batch price.
    per_turn = TurnScore.objects.filter(turn__in=turns, rubric=rubric).values("turn").annotate(n=Count("pk"))
    assert per_turn.count() == turns.count() and {row["n"] for row in per_turn} == {len(METRICS)}
    assert not TurnScore.objects.filter(turn__in=turns, rubric=rubric).exclude(status="ok").exists()
    assert set(LLMCall.objects.filter(batch=batch).values_list("price_factor", flat=True)) == {0.5}
