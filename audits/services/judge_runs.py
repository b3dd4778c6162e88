"""Judging runs on the workers: open, claim with a lease, keep, finish, and sweep the dead ones.

Opening a run queues it on commit; a worker claims it by compare-and-swap and keeps the lease while it works; a sweep
re-sends the task of a run whose worker died.

A run is a `JudgeRun` row: which task carries it out and with what parameters (`task_args`), and its
progress (turns judged of the total). Pages read progress from the row; the broker only wakes workers.
Re-judging an audit under another rubric version is such a run (`audit_rejudge_open`); so are the
re-runs of judge validation (annotation.tasks).

A run ends by what it judged: done (every turn scored), done with failures, or failed (no turn scored, or
the run broke off), with the cause in the provider's words — the messages of its batches (an upload
refused, a batch rejected at validation, expired or cancelled at the provider) and the most common
reasons its turns went unscored. A batch-capable endpoint is checked for the Files and Batch API before a
run uses it: without one, the run is refused, or judged by online calls when the endpoint says so
(`ModelEndpoint.batch_fallback`). A running batch run can be cancelled (`judge_run_cancel`).
"""

from __future__ import annotations

import logging
import socket
from collections import Counter
from collections.abc import Callable, Iterable

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from audits.judge import PARSE_OK, TurnJudgement
from audits.models import Audit, Dialogue, JudgeBatch, JudgeRun, ModelEndpoint, PromptTemplate, Turn
from audits.selectors.judge_runs import judge_run_latest
from audits.services.analysis import analysis_start
from audits.services.database_outage import OUTAGE_ERRORS, drop_connection
from audits.services.design import prompt_template_mark_used
from audits.services.judging import judgements_run, turn_scores_store, turns_to_judge
from audits.services.leases import (
    ClaimLost,
    LeaseKeeper,
    lease_claim,
    lease_claimable,
    lease_release,
    lease_renew,
    lease_soonest,
    lease_token,
)
from audits.services.task_queue import AUDIT_REJUDGE, JUDGE_RUNS_SWEEP, audit_task_queue, task_send

logger = logging.getLogger(__name__)


# The cause a run states is cut to this many characters; the most common reasons turns went unscored, this many.
CAUSE_MAX = 2000
PROBLEM_GROUPS = 3


# This worker's claim on the run ran out and another worker took it over.
RunLost = ClaimLost


class RunRefused(RuntimeError):
    """The run cannot be carried out as asked (e.g. its endpoint has no Batch API and may not judge online)."""


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
    claimed = lease_claim(
        JudgeRun.objects.filter(pk=run_id), token=token, seconds=lease_seconds(), statuses=[JudgeRun.Status.QUEUED]
    )
    return JudgeRun.objects.get(pk=run_id) if claimed else None


def _lease_keeper(run_id: int, token: str) -> LeaseKeeper:
    """Renews the claim on a thread of its own while the run works (online judging blocks for long)."""
    lease = lease_seconds()
    jobs = JudgeRun.objects.filter(pk=run_id)
    return LeaseKeeper(
        lambda: lease_renew(jobs, token=token, seconds=lease),
        every=max(0.5, lease / 3),
        name=f"judge-run-{run_id}-lease",
    )


def judgement_counts(judgements: Iterable[TurnJudgement]) -> dict:
    """What a run's body judged, as `judge_run_execute` takes it: turns scored, turns left unscored, and
    the most common reasons they were left so ([reason, turns], largest first)."""
    scored, problems = 0, Counter()
    for judgement in judgements:
        if judgement.status == PARSE_OK:
            scored += 1
        else:
            problems[judgement.problem or f"judgement {judgement.status}"] += 1
    return {
        "scored": scored,
        "unscored": sum(problems.values()),
        "problems": [[problem, n] for problem, n in problems.most_common(PROBLEM_GROUPS)],
    }


def _batch_route(run: JudgeRun) -> str:
    """Check a batch run's endpoint for the Files and Batch API before the run uses it. Without one the run
    is refused (RunRefused), or turned into an online run when the endpoint's fallback is "direct" (the
    note it returns says so). A run whose batches are already at the provider is not checked again."""
    if not run.via_batch or run.batches.exclude(provider_batch_id="").exists():
        return ""
    # Imported here, not at the top: the Batch API path loads the OpenAI SDK, which costs over a second.
    from audits.services.batch_judging import batch_api_missing

    missing = batch_api_missing(run.endpoint)
    if not missing:
        return ""
    if run.endpoint.batch_fallback != "direct":
        raise RunRefused(
            f"refused: {missing}. Nothing was sent. Untick the endpoint's Batch API, or set its batch "
            "fallback to judge by direct calls"
        )
    JudgeRun.objects.filter(pk=run.pk).update(via_batch=False)
    run.via_batch = False
    return f"judged by direct calls at the online price: {missing}"


def _batch_causes(run: JudgeRun) -> list[str]:
    """What the run's batches say about lines they did not answer, one line each, in the provider's words."""
    causes = []
    for b in run.batches.order_by("round", "pk"):
        name = f"batch {b.round + 1} ({b.provider_batch_id or 'never created at the provider'})"
        if b.error:
            causes.append(f"{name}: {b.error}")
        elif b.final_status == JudgeBatch.Status.EXPIRED and b.unrun:
            causes.append(f"{name} expired with {b.unrun} of {b.lines} lines not run")
        elif b.final_status == JudgeBatch.Status.CANCELLED:
            causes.append(f"{name} was cancelled at the provider with {b.unrun} of {b.lines} lines not run")
    if run.cancel_requested_at is not None:
        causes.append(f"cancelled on request at {run.cancel_requested_at:%Y-%m-%d %H:%M}")
    return causes


def _outcome(run: JudgeRun, counts: dict, note: str) -> tuple[str, str]:
    """(status, cause) of a run whose body returned `counts` (`judgement_counts` and calls)."""
    total = run.total
    scored = counts.get("scored", total)
    unscored = counts.get("unscored", total - scored)
    parts = [note] if note else []
    if unscored:
        parts.append(f"{unscored} of {scored + unscored} turns not scored")
        parts.extend(_batch_causes(run))
        stated = [b for b in run.batches.values_list("provider_batch_id", flat=True) if b]
        parts.extend(
            f"{n} turns: {problem}"
            for problem, n in counts.get("problems", [])
            # A line a batch never ran says what its batch said, stated above.
            if not (problem.startswith("batch line: not run: batch ") and any(b in problem for b in stated))
        )
    elif run.cancel_requested_at is not None:
        parts.extend(_batch_causes(run))
    if scored + unscored and not scored:
        status = JudgeRun.Status.FAILED
    elif unscored:
        status = JudgeRun.Status.DONE_WITH_FAILURES
    else:
        status = JudgeRun.Status.DONE
    return status, "; ".join(parts)[:CAUSE_MAX]


def judge_run_execute(*, run_id: int, body: Callable[[JudgeRun, Callable[[], None]], dict]) -> str:
    """Claim the run and carry it out: `body(run, keep_alive)` judges and stores, returning its counts
    (`calls_sent`, `calls_cached`, and what it judged: `judgement_counts`); `keep_alive()` raises RunLost
    once another worker holds the run. The run ends done, done with failures or failed, with its cause.
    Returns the run's status, or "skipped" when it was not claimable (done, or held by a live worker)."""
    token = lease_token(socket.gethostname())
    run = judge_run_claim(run_id=run_id, token=token)
    if run is None:
        return "skipped"
    note = ""
    try:
        with _lease_keeper(run.pk, token) as keeper:
            note = _batch_route(run)
            counts = body(run, keeper.check)
    except RunLost:
        logger.warning("judge run %s was taken over by another worker", run_id)
        return "lost"
    except OUTAGE_ERRORS as exc:  # not the run's failure: its lease runs out and the sweep takes it up again
        logger.warning("judge run %s interrupted: the database is unreachable (%s)", run_id, exc)
        drop_connection()
        return "interrupted"
    except Exception as exc:  # a failed run says why on its page; the ledger keeps every call it paid for
        if not isinstance(exc, RunRefused):
            logger.exception("judge run %s failed", run_id)
        run.refresh_from_db()
        head = str(exc) if isinstance(exc, RunRefused) else f"{type(exc).__name__}: {exc}"
        cause = "; ".join([head, *_batch_causes(run)])
        lease_release(
            JudgeRun.objects.filter(pk=run_id),
            token=token,
            running=None,
            status=JudgeRun.Status.FAILED,
            error=cause[:CAUSE_MAX],
            finished_at=timezone.now(),
        )
        return JudgeRun.Status.FAILED
    run.refresh_from_db()
    status, cause = _outcome(run, counts, note)
    lease_release(
        JudgeRun.objects.filter(pk=run_id),
        token=token,
        running=None,
        status=status,
        judged=run.total,
        scored=counts.get("scored", run.total),
        calls_sent=counts.get("calls_sent", 0),
        calls_cached=counts.get("calls_cached", 0),
        error=cause,
        finished_at=timezone.now(),
    )
    return status


def judge_run_cancel(*, run_id: int) -> JudgeRun:
    """Cancel a run: a queued one ends at once; a running batch run asks the provider to cancel its open
    batches and sends nothing more (its worker collects what they finished and ends the run, saying it was
    cancelled). An online run sends its calls as it goes and cannot be cancelled. Raises ValueError saying
    why a run cannot be cancelled; the provider's refusal comes through in its words."""
    run = JudgeRun.objects.select_related("endpoint").filter(pk=run_id).first()
    if run is None:
        raise ValueError(f"no judging run {run_id}")
    now = timezone.now()
    if not run.is_open:
        raise ValueError(f"judging run {run.pk} is {run.get_status_display().lower()}: nothing to cancel")
    ended = JudgeRun.objects.filter(pk=run.pk, status=JudgeRun.Status.QUEUED).update(
        status=JudgeRun.Status.FAILED,
        cancel_requested_at=now,
        error="cancelled on request before it started; nothing was sent",
        finished_at=now,
    )
    if not ended:
        if not run.via_batch:
            raise ValueError(f"judging run {run.pk} judges by online calls, sent as it goes: it cannot be cancelled")
        JudgeRun.objects.filter(pk=run.pk, cancel_requested_at__isnull=True).update(cancel_requested_at=now)
        # Imported here, not at the top: the Batch API path loads the OpenAI SDK, which costs over a second.
        from audits.services.batch_judging import BatchApiError, run_batches_cancel

        try:
            run_batches_cancel(run)
        except BatchApiError as exc:
            raise ValueError(f"the provider did not cancel the batch: {exc}") from None
    run.refresh_from_db()
    return run


def judge_runs_sweep() -> int:
    """Re-send the task of every open run nobody holds (queued, or its lease ran out); when live leases
    remain, sweep again as the soonest runs out, so a run whose worker dies is taken up unattended.
    Returns the runs re-sent."""
    now = timezone.now()
    stale = JudgeRun.objects.filter(lease_claimable([JudgeRun.Status.QUEUED], now))
    sent = 0
    for run in stale:
        _enqueue(run)
        sent += 1
    soonest = lease_soonest(JudgeRun.objects.filter(lease_until__gte=now))
    if soonest is not None:
        countdown = max(0.0, (soonest - now).total_seconds()) + 1.0
        task_send(JUDGE_RUNS_SWEEP, countdown=countdown, queue=audit_task_queue())
    return sent


def judge_run_state(*, owner: str) -> dict | None:
    """The owner's latest run as pages and the API show it (`audits.selectors.judge_runs.judge_run_view`);
    None: never run."""
    return judge_run_latest(owner=owner)


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
            allowed=template.judge_allowed_values,
            run=run,
            keep_alive=keep_alive,
        )
        keep_alive()
        prompt_template_mark_used(template)
        turn_scores_store(judgements=result.judgements, rubric=template)
        return {
            "calls_sent": result.calls_sent,
            "calls_cached": result.calls_cached,
            **judgement_counts(result.judgements.values()),
        }

    status = judge_run_execute(run_id=run_id, body=body)
    if status in (JudgeRun.Status.DONE, JudgeRun.Status.DONE_WITH_FAILURES):
        params = JudgeRun.objects.get(pk=run_id).task_args
        if Audit.objects.filter(pk=params["audit_id"], judge_template_id=params["template_id"]).exists():
            # The run stored scores under the audit's own rubric: its default analysis is computed again.
            analysis_start(audit_id=params["audit_id"])
    return status
