"""Judging runs on the workers: open, claim with a lease, keep, finish, and sweep the dead ones.

Opening a run queues it on commit; a worker claims it by compare-and-swap and keeps the lease while it works; a sweep
re-sends the task of a run whose worker died.

A run is a `JudgeRun` row: which task carries it out and with what parameters (`task_args`), and its
progress (turns judged of the total). Pages read progress from the row; the broker only wakes workers.
Re-judging an audit under another rubric version is such a run (`audit_rejudge_open`); so are the
re-runs of judge validation (annotation.tasks).
"""

from __future__ import annotations

import logging
import socket
import threading
import uuid
from collections.abc import Callable
from datetime import timedelta

from django.conf import settings
from django.db import connection, transaction
from django.db.models import F, Q
from django.utils import timezone

from audits.models import Audit, Dialogue, JudgeRun, ModelEndpoint, PromptTemplate, Turn
from audits.services.design import prompt_template_mark_used
from audits.services.judging import judgements_run, turn_scores_store, turns_to_judge
from audits.services.task_queue import AUDIT_REJUDGE, JUDGE_RUNS_SWEEP, audit_task_queue, task_send

logger = logging.getLogger(__name__)


class RunLost(RuntimeError):
    """This worker's claim on the run ran out and another worker took it over."""


def lease_seconds() -> int:
    return int(settings.JUDGE_RUN_LEASE_SECONDS)


def _enqueue(run: JudgeRun, countdown: float | None = None) -> None:
    task_send(run.task_name, (run.pk,), queue=audit_task_queue(), countdown=countdown)


@transaction.atomic
def judge_run_open(
    *,
    owner: str,
    task_name: str,
    endpoint: ModelEndpoint,
    total: int,
    task_args: dict | None = None,
    description: str = "",
) -> JudgeRun:
    """The owner's open run, or a new one sent to the workers on commit (one open run per owner).
    It goes through the Batch API when the endpoint is marked batch-capable."""
    found = JudgeRun.objects.select_for_update().filter(
        owner=owner, status__in=[JudgeRun.Status.QUEUED, JudgeRun.Status.RUNNING]
    )
    run = found.first()
    if run is not None:
        return run
    run = JudgeRun.objects.create(
        owner=owner,
        task_name=task_name,
        task_args=task_args or {},
        endpoint=endpoint,
        via_batch=bool(endpoint.batch_capable and not endpoint.is_simulation),
        total=total,
        description=description[:300],
    )
    transaction.on_commit(lambda: _enqueue(run))
    return run


def judge_run_claim(*, run_id: int, token: str) -> JudgeRun | None:
    """Take the run if it is queued, or running under a lease that ran out (its worker died)."""
    now = timezone.now()
    claimed = (
        JudgeRun.objects.filter(pk=run_id)
        .filter(Q(status=JudgeRun.Status.QUEUED) | Q(status=JudgeRun.Status.RUNNING, lease_until__lt=now))
        .update(
            status=JudgeRun.Status.RUNNING,
            claimed_by=token,
            lease_until=now + timedelta(seconds=lease_seconds()),
            runs=F("runs") + 1,
            started_at=now,
        )
    )
    return JudgeRun.objects.get(pk=run_id) if claimed else None


class _LeaseKeeper:
    """Renews the claim on a thread of its own while the run works (online judging blocks for long)."""

    def __init__(self, run_id: int, token: str) -> None:
        self.run_id, self.token = run_id, token
        self.lost = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=f"judge-run-{run_id}-lease", daemon=True)

    def _loop(self) -> None:
        lease = lease_seconds()
        try:
            while not self._stop.wait(max(0.5, lease / 3)):
                renewed = JudgeRun.objects.filter(
                    pk=self.run_id, claimed_by=self.token, status=JudgeRun.Status.RUNNING
                ).update(lease_until=timezone.now() + timedelta(seconds=lease))
                if not renewed:
                    self.lost.set()
                    return
        finally:
            connection.close()  # this thread's own connection

    def check(self) -> None:
        if self.lost.is_set():
            raise RunLost(f"judge run {self.run_id}: the claim was taken over")

    def __enter__(self) -> _LeaseKeeper:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(5)


def judge_run_execute(*, run_id: int, body: Callable[[JudgeRun, Callable[[], None]], dict]) -> str:
    """Claim the run and carry it out: `body(run, keep_alive)` judges and stores, returning its counts
    (`calls_sent`, `calls_cached`); `keep_alive()` raises RunLost once another worker holds the run.
    Returns the run's status, or "skipped" when it was not claimable (done, or held by a live worker)."""
    token = f"{socket.gethostname()}:{uuid.uuid4().hex[:12]}"
    run = judge_run_claim(run_id=run_id, token=token)
    if run is None:
        return "skipped"
    try:
        with _LeaseKeeper(run.pk, token) as keeper:
            counts = body(run, keeper.check)
    except RunLost:
        logger.warning("judge run %s was taken over by another worker", run_id)
        return "lost"
    except Exception as exc:  # a failed run says why on its page; the ledger keeps every call it paid for
        logger.exception("judge run %s failed", run_id)
        JudgeRun.objects.filter(pk=run_id, claimed_by=token).update(
            status=JudgeRun.Status.FAILED, error=f"{type(exc).__name__}: {exc}"[:2000], finished_at=timezone.now()
        )
        return JudgeRun.Status.FAILED
    JudgeRun.objects.filter(pk=run_id, claimed_by=token).update(
        status=JudgeRun.Status.DONE,
        judged=run.total,
        calls_sent=counts.get("calls_sent", 0),
        calls_cached=counts.get("calls_cached", 0),
        lease_until=None,
        finished_at=timezone.now(),
    )
    return JudgeRun.Status.DONE


def judge_runs_sweep() -> int:
    """Re-send the task of every open run nobody holds (queued, or its lease ran out); when live leases
    remain, sweep again as the soonest runs out, so a run whose worker dies is taken up unattended.
    Returns the runs re-sent."""
    now = timezone.now()
    stale = JudgeRun.objects.filter(
        Q(status=JudgeRun.Status.QUEUED) | Q(status=JudgeRun.Status.RUNNING, lease_until__lt=now)
    )
    sent = 0
    for run in stale:
        _enqueue(run)
        sent += 1
    soonest = (
        JudgeRun.objects.filter(status=JudgeRun.Status.RUNNING, lease_until__gte=now)
        .order_by("lease_until")
        .values_list("lease_until", flat=True)
        .first()
    )
    if soonest is not None:
        countdown = max(0.0, (soonest - now).total_seconds()) + 1.0
        task_send(JUDGE_RUNS_SWEEP, countdown=countdown, queue=audit_task_queue())
    return sent


def judge_run_state(*, owner: str) -> dict | None:
    """The owner's latest run as pages and the API show it: status, turns judged of the total, its
    batches (provider state and line counts), calls sent and reused, the error."""
    run = JudgeRun.objects.filter(owner=owner).order_by("-pk").first()
    if run is None:
        return None
    batches = [
        {
            "round": b.round,
            "status": b.status,
            "lines": b.lines,
            "completed": (b.request_counts or {}).get("completed"),
            "answered": b.answered,
            "failed": b.failed,
            "provider_batch_id": b.provider_batch_id,
        }
        for b in run.batches.order_by("round", "pk")
    ]
    return {
        "id": run.pk,
        "status": run.status,
        "open": run.is_open,
        "via_batch": run.via_batch,
        "total": run.total,
        "judged": run.judged,
        "percent": int(100 * run.judged / run.total) if run.total else 0,
        "calls_sent": run.calls_sent,
        "calls_cached": run.calls_cached,
        "batches": batches,
        "error": run.error,
        "created_at": run.created_at,
        "finished_at": run.finished_at,
    }


# --- re-judging an audit under another rubric version -------------------------------------------------


def audit_rejudge_owner(audit: Audit, template: PromptTemplate) -> str:
    return f"audit:{audit.pk}:rubric:{template.pk}"


def audit_rejudge_open(
    *, audit: Audit, judge_template: PromptTemplate, judge_endpoint: ModelEndpoint | None = None
) -> JudgeRun:
    """Queue the judging of every tutor turn of the audit's finished dialogues under a rubric version
    (a judge_rubric template), by the audit's judge or another endpoint; through the Batch API when
    that endpoint is batch-capable. The scores are stored under that rubric beside the audit's own."""
    if judge_template.kind != "judge_rubric":
        raise ValueError("the judge template must be a judge_rubric template")
    if audit.status in (Audit.Status.DRAFT, Audit.Status.CANCELLED):
        raise ValueError(f"a {audit.get_status_display().lower()} audit has no turns to judge")
    endpoint = judge_endpoint or audit.judge_endpoint
    return judge_run_open(
        owner=audit_rejudge_owner(audit, judge_template),
        task_name=AUDIT_REJUDGE,
        task_args={"audit_id": audit.pk, "template_id": judge_template.pk, "endpoint_id": endpoint.pk},
        endpoint=endpoint,
        total=_audit_turns(audit.pk).count(),
        description=f"{audit.name}: judged by {endpoint} under {judge_template}",
    )


def _audit_turns(audit_id: int):
    return Turn.objects.filter(
        dialogue__audit_id=audit_id, dialogue__status=Dialogue.Status.DONE, role=Turn.Role.TUTOR
    ).order_by("pk")


def audit_rejudge_run(*, run_id: int) -> str:
    """The task's body: judge the audit's turns (`audits.services.judging`, by batch or online) and store
    the scores under the rubric, in one transaction at the end."""

    def body(run: JudgeRun, keep_alive) -> dict:
        params = run.task_args
        audit = Audit.objects.get(pk=params["audit_id"])
        template = PromptTemplate.objects.get(pk=params["template_id"])
        endpoint = ModelEndpoint.objects.get(pk=params["endpoint_id"])
        turns = turns_to_judge(turn_ids=_audit_turns(audit.pk).values_list("pk", flat=True))
        result = judgements_run(
            turns=turns,
            judge_endpoint=endpoint,
            template_text=template.text,
            max_reasks=audit.max_reasks,
            run=run,
            keep_alive=keep_alive,
        )
        keep_alive()
        prompt_template_mark_used(template)
        turn_scores_store(judgements=result.judgements, rubric=template)
        return {"calls_sent": result.calls_sent, "calls_cached": result.calls_cached}

    return judge_run_execute(run_id=run_id, body=body)
