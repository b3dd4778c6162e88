"""A database outage during an audit (a PostgreSQL restart, a failover) never marks a dialogue failed: the ledger's
round is applied again on a fresh connection, and a dialogue that cannot reach the database is left to its claim's
lease and taken up again. The real restart is drilled in test_drill_service_restarts.py (PostgreSQL + Redis only);
here the outage is an OperationalError raised where psycopg raises it, on any database."""

from datetime import timedelta

import pytest
from django.db import OperationalError, transaction
from django.utils import timezone

from audits.models import Audit, Dialogue, LLMCall
from audits.services import database_outage, dialogue_batches, ledger
from audits.services.audit_lifecycle import audit_create
from audits.services.dialogue_batches import audit_run_inline
from audits.tests.engine_factories import explicit_conditions, make_questions, simulation_endpoint

LOST = "server closed the connection unexpectedly"


@pytest.fixture
def no_waits(monkeypatch):
    monkeypatch.setattr(database_outage, "OUTAGE_WAITS", (0.0, 0.0, 0.0))


def failing(times: int, function):
    """`function`, raising the connection-lost error on its first `times` calls."""
    calls = {"n": 0}

    def wrapped(*args):
        calls["n"] += 1
        if calls["n"] <= times:
            raise OperationalError(LOST)
        return function(*args)

    wrapped.calls = calls
    return wrapped


def test_through_outage_tries_again_then_gives_up(no_waits):
    flaky = failing(3, lambda x: x * 2)
    assert database_outage.through_outage(flaky, 21) == 42
    assert flaky.calls["n"] == 4

    down = failing(10, lambda: "never")
    with pytest.raises(OperationalError, match=LOST):
        database_outage.through_outage(down)
    assert down.calls["n"] == 4  # one try per wait, and the last


@pytest.mark.django_db
def test_through_outage_inside_a_transaction_raises_at_once(no_waits):
    flaky = failing(1, lambda: "too late")
    with transaction.atomic(), pytest.raises(OperationalError):
        database_outage.through_outage(flaky)
    assert flaky.calls["n"] == 1


def small_audit(name: str) -> Audit:
    student = simulation_endpoint(f"{name} student")
    return audit_create(
        name=name,
        tutors=[simulation_endpoint(f"{name} tutor")],
        student_endpoint=student,
        judge_endpoint=student,
        questions=make_questions(2, prefix=name),
        conditions=explicit_conditions(),
        t_max=2,
    )


@pytest.mark.django_db(transaction=True)
def test_a_ledger_round_that_loses_its_connection_is_applied_again(no_waits, monkeypatch):
    flaky = failing(2, ledger._apply_round)
    monkeypatch.setattr(ledger, "_apply_round", flaky)
    audit = small_audit("ledger outage")
    assert audit_run_inline(audit=audit) == Audit.Status.FINISHED
    assert flaky.calls["n"] > 2
    assert set(Dialogue.objects.filter(audit=audit).values_list("status", flat=True)) == {Dialogue.Status.DONE}
    assert not LLMCall.objects.filter(status=LLMCall.Status.FAILED).exists()


@pytest.mark.django_db(transaction=True)
def test_a_dialogue_cut_off_by_the_database_is_taken_up_again_not_failed(monkeypatch):
    audit = small_audit("dialogue outage")
    execute = dialogue_batches.dialogue_execute
    cut = []

    async def execute_cut_once(job, client, endpoints):
        if not cut:  # the first dialogue to run loses the database
            cut.append(job.sample_key)
            raise OperationalError(LOST)
        return await execute(job, client, endpoints)

    monkeypatch.setattr(dialogue_batches, "dialogue_execute", execute_cut_once)
    # Every other dialogue finishes; the cut one keeps its claim (not failed) while the lease holds.
    assert audit_run_inline(audit=audit) == Audit.Status.RUNNING
    dialogues = Dialogue.objects.filter(audit=audit)
    [first] = dialogues.exclude(status=Dialogue.Status.DONE)
    assert (first.status, first.error, first.runs) == (Dialogue.Status.RUNNING, "", 1)
    assert dialogues.filter(status=Dialogue.Status.DONE).count() == dialogues.count() - 1

    # Once the lease runs out (its worker gave up on it), it is taken up again and finishes.
    Dialogue.objects.filter(pk=first.pk).update(lease_until=timezone.now() - timedelta(seconds=1))
    assert audit_run_inline(audit=audit) == Audit.Status.FINISHED
    first.refresh_from_db()
    assert (first.status, first.runs, len(cut)) == (Dialogue.Status.DONE, 2, 1)


@pytest.mark.django_db(transaction=True)
def test_a_judge_run_cut_off_by_the_database_keeps_its_claim():
    from audits.models import JudgeRun
    from audits.services.judge_runs import judge_run_execute

    run = JudgeRun.objects.create(owner="outage", task_name="audits.rejudge", total=3)

    def body(run, keep_alive):
        raise OperationalError(LOST)

    assert judge_run_execute(run_id=run.pk, body=body) == "interrupted"
    run.refresh_from_db()
    assert (run.status, run.error, run.runs) == (JudgeRun.Status.RUNNING, "", 1)
    assert run.lease_until > timezone.now()  # taken up again by the sweep once it runs out


@pytest.mark.django_db(transaction=True)
def test_an_analysis_cut_off_by_the_database_is_not_failed(monkeypatch):
    from audits.models import AnalysisResult
    from audits.services import analysis

    audit = small_audit("analysis outage")
    row = AnalysisResult.objects.create(audit=audit, parameters={}, status=AnalysisResult.Status.QUEUED)

    def inputs(audit):  # the connection is lost while the scores are read
        raise OperationalError(LOST)

    monkeypatch.setattr(analysis, "audit_analysis_inputs", inputs)
    assert analysis.analysis_run(analysis_result_id=row.pk) == "interrupted"
    row.refresh_from_db()
    assert (row.status, row.error) == (AnalysisResult.Status.RUNNING, "")
