"""Sending work to the Celery workers by task name, without importing `audits.tasks`.

Services enqueue this way because the tasks import the services, never the other way round.

The names below are the ones `audits.tasks` registers. A task is sent through its own `apply_async`, found
in the app's registry by name, so whatever applies to calling the task object applies here as well: the
app's settings for it (eager mode included) and test doubles of `apply_async`.
"""

from __future__ import annotations

from celery import Task, current_app
from django.conf import settings
from django.db import transaction

QUESTION_IMPORT_RUN = "audits.question_import_run"
AUDIT_ANALYSIS = "audits.audit_analysis"
AUDIT_RUN_BATCH = "audits.audit_run_batch"
AUDIT_SWEEP = "audits.audit_sweep"
AUDIT_TURNS_REJUDGE = "audits.audit_turns_rejudge"
AUDIT_REJUDGE = "audits.audit_rejudge"
JUDGE_RUNS_SWEEP = "audits.judge_runs_sweep"


def audit_task_queue() -> str:
    """The queue of audit batches, sweeps, imports and judging runs (a deployment may give it its own workers)."""
    return settings.AUDITS_TASK_QUEUE


def task_send(name: str, args: tuple = (), *, queue: str, countdown: float | None = None) -> None:
    """Send the task registered under `name` with these positional arguments to `queue` (after
    `countdown` seconds, if given)."""
    options: dict = {"queue": queue}
    if countdown is not None:
        options["countdown"] = countdown
    _registered_task(name).apply_async(args, **options)


def task_send_on_commit(name: str, args: tuple = (), *, queue: str) -> None:
    """`task_send` once the current transaction commits (at once outside one)."""
    transaction.on_commit(lambda: task_send(name, args, queue=queue))


def _registered_task(name: str) -> Task:
    tasks = current_app.tasks
    if name not in tasks:
        # A web process imports no task module of its own accord; load the installed apps' task modules
        # the way a worker does when it starts.
        current_app.autodiscover_tasks(force=True)
    return tasks[name]
