"""Celery tasks of audits: thin — load ids, call a service. The database holds all progress."""

from celery import shared_task

from audits.models import QuestionImport


@shared_task(name="audits.question_import_run", acks_late=True)
def question_import_run_task(question_import_id: int) -> str:
    """Run a queued import. Safe to deliver twice: a finished import is left alone, and a run that a
    killed worker left `running` starts again from the file (its writes were one transaction)."""
    from audits.services.questionbank import question_import_run

    question_import = QuestionImport.objects.filter(pk=question_import_id).first()
    if question_import is None or question_import.is_finished:
        return "skipped"
    return question_import_run(question_import=question_import).status


# --- fairness analysis: one (audit, parameters) analysis, its progress and result in its row ---------


@shared_task(name="audits.audit_analysis", acks_late=True)
def audit_analysis_task(analysis_result_id: int) -> str:
    """Compute a queued fairness analysis. Safe to deliver twice: the row is claimed by compare-and-swap,
    and a row that is done, failed or held by a live worker is skipped (see services.analysis)."""
    from audits.services.analysis import analysis_run

    return analysis_run(analysis_result_id=analysis_result_id)


# --- audit engine: batches of dialogues, and the sweep that takes up work a dead worker held ---------


@shared_task(name="audits.audit_run_batch", acks_late=True)
def audit_run_batch_task(audit_id: int, dialogue_ids: list[int]) -> dict:
    """Run a batch of dialogues. Safe to deliver twice: each dialogue is claimed by compare-and-swap."""
    from audits.services.runs import audit_sweep_schedule, dialogue_batch_run

    counts = dialogue_batch_run(audit_id=audit_id, dialogue_ids=dialogue_ids)
    audit_sweep_schedule(audit_id=audit_id)
    return counts


@shared_task(name="audits.audit_sweep", acks_late=True)
def audit_sweep_task(audit_id: int | None = None) -> int:
    """Re-send pending work and work whose claim expired (its worker died); see services.runs.audit_sweep."""
    from audits.services.runs import audit_sweep, audit_sweep_schedule

    sent = audit_sweep(audit_id=audit_id)
    audit_sweep_schedule(audit_id=audit_id, force=audit_id is None)
    return sent


@shared_task(name="audits.audit_turns_rejudge", acks_late=True)
def audit_turns_rejudge_task(audit_id: int) -> dict:
    """Re-judge an audit's unparsable and failed turns. Safe to deliver twice: a turn is written only
    while it is still unparsable or failed (see services.judging)."""
    from audits.services.judging import audit_turns_rejudge_run

    return audit_turns_rejudge_run(audit_id=audit_id)


# --- judging runs (re-judging under another rubric, judge validation): by batch or online -------------


@shared_task(name="audits.audit_rejudge", acks_late=True)
def audit_rejudge_task(run_id: int) -> str:
    """Judge an audit's turns under another rubric version. Safe to deliver twice: the run is claimed by
    compare-and-swap, and a successor polls the batch a dead worker created (see services.judge_runs)."""
    from audits.services.judge_runs import audit_rejudge_run

    return audit_rejudge_run(run_id=run_id)


@shared_task(name="audits.judge_runs_sweep", acks_late=True)
def judge_runs_sweep_task() -> int:
    """Re-send judging runs nobody holds (queued, or their worker died)."""
    from audits.services.judge_runs import judge_runs_sweep

    return judge_runs_sweep()


def _sweep_on_worker_start(sender=None, **kwargs) -> None:
    # A worker that starts picks up what a dead one left behind (database rows, not broker state).
    from audits.services.runs import audit_task_queue

    audit_sweep_task.apply_async(queue=audit_task_queue())
    judge_runs_sweep_task.apply_async(queue=audit_task_queue())


from celery.signals import worker_ready  # noqa: E402

worker_ready.connect(_sweep_on_worker_start, dispatch_uid="audits.sweep_on_worker_start")
