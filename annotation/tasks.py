"""Celery tasks of annotation: thin — load ids, call a service. The database holds all progress."""

from celery import shared_task

from annotation.judge_validation.judging import judge_validation_run


@shared_task(name="annotation.judge_validation_run", acks_late=True)
def judge_validation_run_task(run_id: int) -> str:
    """Score a validation's sampled turns with its judge (a re-run, or a judge added). Safe to deliver
    twice: the run is claimed by compare-and-swap (audits.services.judge_runs), and the ledger keeps
    every call made, so a successor after a crash pays only for what was not answered."""
    return judge_validation_run(run_id=run_id)
