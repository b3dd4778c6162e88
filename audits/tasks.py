"""Celery tasks of audits: thin — load ids, call a service. The database holds all progress.

Services send these tasks by name (`audits.services.task_queue`), so this module imports them and not the
other way round. The worker hooks at the end take up, when a worker starts or its broker comes back, the
work a dead worker or a lost broker left behind.
"""

from celery import bootsteps, current_app, shared_task
from celery.signals import worker_ready

from audits.models import QuestionImport
from audits.services.analysis import analysis_run
from audits.services.audit_lifecycle import audit_sweep, audit_sweep_schedule
from audits.services.dialogue_batches import dialogue_batch_run, engine_preload
from audits.services.judge_runs import audit_rejudge_run, judge_runs_sweep
from audits.services.judging import audit_turns_rejudge_run
from audits.services.questionbank import question_import_run
from audits.services.task_queue import (
    AUDIT_ANALYSIS,
    AUDIT_REJUDGE,
    AUDIT_RUN_BATCH,
    AUDIT_SWEEP,
    AUDIT_TURNS_REJUDGE,
    JUDGE_RUNS_SWEEP,
    QUESTION_IMPORT_RUN,
    audit_task_queue,
)


@shared_task(name=QUESTION_IMPORT_RUN, acks_late=True)
def question_import_run_task(question_import_id: int) -> str:
    """Run a queued import. Safe to deliver twice: a finished import is left alone, and a run that a
    killed worker left `running` starts again from the file (its writes were one transaction)."""
    try:
        question_import = QuestionImport.objects.get(pk=question_import_id)
    except QuestionImport.DoesNotExist:
        return "skipped"
    if question_import.is_finished:
        return "skipped"
    return question_import_run(question_import=question_import).status


# --- fairness analysis: one (audit, parameters) analysis, its progress and result in its row ---------


@shared_task(name=AUDIT_ANALYSIS, acks_late=True)
def audit_analysis_task(analysis_result_id: int) -> str:
    """Compute a queued fairness analysis. Safe to deliver twice: the row is claimed by compare-and-swap,
    and a row that is done, failed or held by a live worker is skipped (see services.analysis)."""
    return analysis_run(analysis_result_id=analysis_result_id)


# --- audit engine: batches of dialogues, and the sweep that takes up work a dead worker held ---------


@shared_task(name=AUDIT_RUN_BATCH, acks_late=True)
def audit_run_batch_task(audit_id: int, dialogue_ids: list[int]) -> dict:
    """Run a batch of dialogues. Safe to deliver twice: each dialogue is claimed by compare-and-swap."""
    counts = dialogue_batch_run(audit_id=audit_id, dialogue_ids=dialogue_ids)
    audit_sweep_schedule(audit_id=audit_id)
    return counts


@shared_task(name=AUDIT_SWEEP, acks_late=True)
def audit_sweep_task(audit_id: int | None = None) -> int:
    """Re-send pending work and work whose claim expired (its worker died); see
    services.audit_lifecycle.audit_sweep."""
    sent = audit_sweep(audit_id=audit_id)
    audit_sweep_schedule(audit_id=audit_id, force=audit_id is None)
    return sent


@shared_task(name=AUDIT_TURNS_REJUDGE, acks_late=True)
def audit_turns_rejudge_task(audit_id: int) -> dict:
    """Re-judge an audit's unparsable and failed turns. Safe to deliver twice: a turn is written only
    while it is still unparsable or failed (see services.judging)."""
    return audit_turns_rejudge_run(audit_id=audit_id)


# --- judging runs (re-judging under another rubric, judge validation): by batch or online -------------


@shared_task(name=AUDIT_REJUDGE, acks_late=True)
def audit_rejudge_task(run_id: int) -> str:
    """Judge an audit's turns under another rubric version. Safe to deliver twice: the run is claimed by
    compare-and-swap, and a successor polls the batch a dead worker created (see services.judge_runs)."""
    return audit_rejudge_run(run_id=run_id)


@shared_task(name=JUDGE_RUNS_SWEEP, acks_late=True)
def judge_runs_sweep_task() -> int:
    """Re-send judging runs nobody holds (queued, or their worker died)."""
    return judge_runs_sweep()


# --- worker hooks: what a dead worker or a lost broker left behind ----------------------------------


def sweeps_send(sender=None, **kwargs) -> None:
    """Send the audit sweep and the judging-run sweep: the work is in database rows, not broker state."""
    audit_sweep_task.apply_async(queue=audit_task_queue())
    judge_runs_sweep_task.apply_async(queue=audit_task_queue())


class SweepAfterReconnect(bootsteps.StartStopStep):
    """When the worker's consumer reconnects to the broker, sweep the running audits.

    A broker restarted without persistence (Redis with `--save ""`) has lost every queued batch; only the
    database still knows the work, and a worker that stayed up would otherwise wait for messages that will
    never come. The first connection is left to the `worker_ready` sweep; a sweep sent while messages were
    not lost only duplicates batches, which their compare-and-swap claims skip.
    """

    requires = {"celery.worker.consumer.tasks:Tasks"}

    def __init__(self, parent, **kwargs):
        super().__init__(parent, **kwargs)
        self.connected_before = False

    def start(self, parent):
        if self.connected_before:
            sweeps_send()
        self.connected_before = True


# A worker imports this module (autodiscovery) before it builds its consumer, so the step is in place in time.
worker_ready.connect(sweeps_send, dispatch_uid="audits.sweep_on_worker_start")
worker_ready.connect(lambda **kwargs: engine_preload(), dispatch_uid="audits.preload_on_worker_start", weak=False)
current_app.steps["consumer"].add(SweepAfterReconnect)
