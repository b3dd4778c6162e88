"""An audit's fairness analysis as a job and a cache: computed on a Celery worker, kept per (audit, parameters).

It turns an audit into fairness results: it builds the score frame and design from the database, runs
`audits.fairness.analyze` on a Celery worker with its progress in the database, and caches the result per (audit,
parameters) until the scores change.

One `AnalysisResult` row per (audit, parameters hash) is both the job and the cache (docs/ARCHITECTURE.md
decision 1: the database is the truth, the broker only wakes workers):

- `analysis_request` (results pages, API, exports) returns the analysis when the row is done and its
  scores fingerprint is current; otherwise it makes sure the row is queued — created under the unique
  constraint, or moved back to `queued` by compare-and-swap when it is stale, or queued/running with a
  lease that ran out (its worker died, or the broker lost the message) — sends the task on commit, and
  returns the row's `AnalysisState` (status, cells done / total, error). It never computes.
- `analysis_start` queues the default analysis when an audit finishes or a judging run changes its
  scores (`audits.services.audit_lifecycle`, `audits.services.judge_runs`): nobody has to open it first.
- `analysis_run` (the task's body) claims a queued row by compare-and-swap, so one computation runs per
  row at a time; it writes its progress at most a few times a second, renewing its lease with each write,
  and stores the result only while its claim still holds.
- `audit_analysis` is the synchronous door (`manage.py audit_report`, tests, benchmarks): the same claim
  and the same row, computed in the calling process; it waits for a computation a live worker holds.
- A failed row stays failed for its fingerprint until `analysis_retry` (the retry button) queues it again.

What a done row holds, and the `AuditAnalysis` the pages read from it, is `audits.services.stored_analysis`.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F, Q
from django.utils import timezone

from audits import fairness
from audits.exclusions import ExclusionCounts
from audits.fairness import (
    CONVERSATION_METRICS,
    STUDENT_METRICS,
    AnalysisParameters,
    ContrastTable,
)
from audits.models import AnalysisResult, Audit, Dialogue
from audits.selectors.results import (
    audit_analysis_inputs,
    audit_content_identities,
    scores_fingerprint,
)
from audits.services.database_outage import OUTAGE_ERRORS, drop_connection
from audits.services.leases import ClaimLost, lease_claim, lease_hold, lease_release, lease_token
from audits.services.stored_analysis import AuditAnalysis, analysis_from_row, analysis_from_stored, table_to_json
from audits.services.task_queue import AUDIT_ANALYSIS, task_send

logger = logging.getLogger(__name__)

# Bump when the statistics or the stored layout change, so older cached rows are recomputed.
ANALYSIS_VERSION = 2  # 2: named rules, exact p, BH flag, mean differences, student table

_PARAMETER_NAMES = frozenset(f.name for f in fields(AnalysisParameters))


def analysis_parameters_from(values: Mapping[str, Any]) -> AnalysisParameters:
    """The analysis parameters among `values` (a form's or a serializer's cleaned data, a command's options,
    a stored row's parameters); other names (an export's format and table, …) are left out, and the
    parameters `values` does not name keep their defaults. Raises ValueError for an invalid value."""
    return AnalysisParameters(**{name: value for name, value in values.items() if name in _PARAMETER_NAMES})


def parameters_hash(parameters: AnalysisParameters) -> str:
    payload = json.dumps({"version": ANALYSIS_VERSION, **parameters.as_dict()}, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()


# --- where a computation stands ---------------------------------------------------------------

Status = AnalysisResult.Status

# A worker writes its progress (and renews its lease) at most this often.
PROGRESS_WRITE_SECONDS = 0.25
# What a 202 answer tells a client to wait before asking again.
RETRY_AFTER_SECONDS = 2
# How often the synchronous door looks again at a row a live worker is computing.
WAIT_POLL_SECONDS = 0.5


def analysis_lease_seconds() -> int:
    """How long a queued or running analysis holds without a progress write before it is queued again."""
    return settings.ANALYSIS_LEASE_SECONDS


def analysis_task_queue() -> str:
    return settings.ANALYSIS_TASK_QUEUE


@dataclass(frozen=True)
class AnalysisState:
    """Where the computation of one (audit, parameters) analysis stands: what the progress state of a page
    shows and the body of the API's 202 answer."""

    status: str
    cells_done: int
    cells_total: int
    error: str
    retry_after: int

    @classmethod
    def of(cls, row: AnalysisResult) -> AnalysisState:
        return cls(
            status=row.status,
            cells_done=row.cells_done,
            cells_total=row.cells_total,
            error=row.error if row.status == Status.FAILED else "",
            retry_after=0 if row.status in (Status.DONE, Status.FAILED) else RETRY_AFTER_SECONDS,
        )

    @property
    def done(self) -> bool:
        return self.status == Status.DONE

    @property
    def failed(self) -> bool:
        return self.status == Status.FAILED

    @property
    def percent(self) -> int:
        return int(100 * self.cells_done / self.cells_total) if self.cells_total else 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "cells_done": self.cells_done,
            "cells_total": self.cells_total,
            "retry_after": self.retry_after,
            "error": self.error,
        }


# The row was claimed again by another computation (ours stopped renewing its lease in time).
AnalysisClaimLost = ClaimLost


# --- the rows: find, queue, claim, renew, finish ---------------------------------------------------


def _row(audit: Audit, key: str) -> AnalysisResult | None:
    # The result is read only when the row is done and current (it is the large part of the row).
    return AnalysisResult.objects.defer("result").filter(audit=audit, parameters_hash=key).first()


def _lease_expired(row: AnalysisResult, now) -> bool:
    return row.lease_until is None or row.lease_until < now


def _needs_queue(row: AnalysisResult, fingerprint: str, now) -> bool:
    """Whether a row must be queued (again): stale (done or failed on other scores), or queued/running
    with a lease that ran out. A failed row on the current scores waits for `analysis_retry`."""
    if row.status in (Status.DONE, Status.FAILED):
        return row.scores_fingerprint != fingerprint
    return _lease_expired(row, now)


def _queued_values(fingerprint: str, now) -> dict[str, Any]:
    return {
        "status": Status.QUEUED,
        "scores_fingerprint": fingerprint,
        "result": {},
        "cells_done": 0,
        "cells_total": 0,
        "error": "",
        "claim_token": lease_token(),
        "lease_until": now + timedelta(seconds=analysis_lease_seconds()),
        "queued_at": now,
        "started_at": None,
        "finished_at": None,
    }


def analysis_enqueue(*, analysis_result_id: int) -> None:
    """Wake a worker for a queued analysis (called on commit). A message the broker refuses or loses costs
    only time: the row stays queued and the first request after its lease runs out sends it again."""
    try:
        task_send(AUDIT_ANALYSIS, (analysis_result_id,), queue=analysis_task_queue())
    except Exception:  # the page must answer; the database still knows the work
        logger.exception(
            "could not send analysis %s to the broker; it is sent again when its lease ends", analysis_result_id
        )


def _create_queued(audit: Audit, parameters: AnalysisParameters, key: str, fingerprint: str, *, send: bool) -> bool:
    """Create the row as queued; False when another request created it first (the unique constraint)."""
    try:
        with transaction.atomic():
            row = AnalysisResult.objects.create(
                audit=audit,
                parameters_hash=key,
                parameters=parameters.as_dict(),
                **_queued_values(fingerprint, timezone.now()),
            )
            if send:
                transaction.on_commit(lambda: analysis_enqueue(analysis_result_id=row.pk))
    except IntegrityError:
        return False
    return True


def _requeue(row: AnalysisResult, fingerprint: str, *, send: bool) -> bool:
    """Move the row back to queued by compare-and-swap on the state it was read in (status and claim
    token, and for a queued/running row a lease that has run out): of two requests that saw the same
    stale row, one queues it and sends the task. A worker whose lease was taken loses its claim."""
    now = timezone.now()
    same = Q(pk=row.pk, status=row.status, claim_token=row.claim_token)
    if row.status in (Status.QUEUED, Status.RUNNING):
        same &= Q(lease_until__isnull=True) | Q(lease_until__lt=now)
    with transaction.atomic():
        queued = AnalysisResult.objects.filter(same).update(**_queued_values(fingerprint, now)) == 1
        if queued and send:
            transaction.on_commit(lambda: analysis_enqueue(analysis_result_id=row.pk))
    return queued


def _ensure(audit: Audit, parameters: AnalysisParameters, *, send: bool = True) -> tuple[AnalysisResult, str]:
    """The audit's row for `parameters`, done and current or on its way there (queued, running, failed):
    created or queued again as needed, the task sent on commit when `send`. Returns (row, fingerprint);
    the fingerprint is "" when a fresh queued/running row made reading the scores unnecessary."""
    key = parameters_hash(parameters)
    for _ in range(5):  # a lost race means another request changed the row: read it again
        row = _row(audit, key)
        if (
            row is not None
            and row.status in (Status.QUEUED, Status.RUNNING)
            and not _lease_expired(row, timezone.now())
        ):
            # Being computed: a poll of the progress reads one row and not the scores.
            return row, ""
        fingerprint = scores_fingerprint(audit)
        if row is None:
            changed = _create_queued(audit, parameters, key, fingerprint, send=send)
        elif _needs_queue(row, fingerprint, timezone.now()):
            changed = _requeue(row, fingerprint, send=send)
        else:
            return row, fingerprint
        if changed:
            # Sent on commit, which in autocommit has already happened (a test may have computed it inline).
            return _row(audit, key), fingerprint
    raise RuntimeError(f"analysis row of audit {audit.pk} kept changing under us")


def _claim(row_id: int, *, from_statuses: tuple[str, ...]) -> str | None:
    """Claim a row for one computation by compare-and-swap: a row in `from_statuses`, or running with a
    lease that ran out (its worker died). Returns the claim token, or None when someone else holds it."""
    token = lease_token()
    claimed = lease_claim(
        AnalysisResult.objects.filter(pk=row_id),
        token=token,
        seconds=analysis_lease_seconds(),
        statuses=from_statuses,
        finished_at=None,
        cells_done=0,
        cells_total=0,
        error="",
    )
    return token if claimed == 1 else None


def _renew(row_id: int, token: str, **values: Any) -> None:
    """Write progress and renew the lease, if the claim still holds; else stop the computation."""
    lease_hold(
        AnalysisResult.objects.filter(pk=row_id),
        token=token,
        seconds=analysis_lease_seconds(),
        what=f"analysis {row_id}",
        **values,
    )


class _ProgressWriter:
    """`fairness.analyze`'s progress callback: keeps the latest (cells done, total) and writes it to the
    row at once the first time (the page learns the total), then at most every PROGRESS_WRITE_SECONDS;
    each write renews the lease."""

    def __init__(self, row_id: int, token: str) -> None:
        self.row_id, self.token = row_id, token
        self.latest: tuple[int, int] | None = None
        self.written_at = -math.inf

    def __call__(self, cells_done: int, cells_total: int) -> None:
        self.latest = (cells_done, cells_total)
        if time.monotonic() - self.written_at >= PROGRESS_WRITE_SECONDS:
            self.flush()

    def flush(self) -> None:
        if self.latest is not None:
            cells_done, cells_total = self.latest
            _renew(self.row_id, self.token, cells_done=cells_done, cells_total=cells_total)
        self.written_at = time.monotonic()


# --- the computation -------------------------------------------------------------------------------


def _analyze_options(audit: Audit) -> dict[str, Any]:
    """The content identities the bootstrap is seeded and ordered by (never ids)."""
    tutor_identity, question_keys = audit_content_identities(audit)
    return {"tutor_identity": tutor_identity, "question_keys": question_keys}


def _compute(row_id: int, token: str, progress: Callable[[int, int], None] | None = None) -> AuditAnalysis:
    """Compute a claimed row's analysis and store it while the claim holds. A failure is written to the
    row (and raised); a lost claim raises AnalysisClaimLost and writes nothing."""
    row = AnalysisResult.objects.defer("result").select_related("audit__judge_template").get(pk=row_id)
    audit, parameters = row.audit, analysis_parameters_from(row.parameters)
    started = time.perf_counter()
    try:
        # The fingerprint is read before the scores: scores that change meanwhile leave the row stale
        # (recomputed on the next request), never a new fingerprint on old numbers.
        fingerprint = scores_fingerprint(audit)
        _renew(row_id, token, scores_fingerprint=fingerprint)
        inputs = audit_analysis_inputs(audit)
        turn_metrics = audit.judge_template.judge_metrics  # the audit's rubric version's own metrics
        writer = _ProgressWriter(row_id, token)

        def report(cells_done: int, cells_total: int) -> None:
            writer(cells_done, cells_total)
            if progress is not None:
                progress(cells_done, cells_total)

        if len(inputs.scores):
            result = fairness.analyze(
                inputs.scores,
                inputs.design,
                turn_metrics=turn_metrics,
                parameters=parameters,
                progress=report,
                n_jobs=settings.ANALYSIS_PROCESSES,
                **_analyze_options(audit),
            )
            pedagogical, conversation, student = result.pedagogical, result.conversation, result.student
        else:
            contrasts = tuple(fairness.build_contrasts(inputs.design))
            pedagogical = ContrastTable((), parameters, turn_metrics, contrasts)
            conversation = ContrastTable((), parameters, CONVERSATION_METRICS, contrasts)
            student = ContrastTable((), parameters, STUDENT_METRICS, contrasts)
        writer.flush()
        seconds = time.perf_counter() - started
        now = timezone.now()
        stored = {
            "pedagogical": table_to_json(pedagogical),
            "conversation": table_to_json(conversation),
            "student": table_to_json(student),
        }
        finished = lease_release(
            AnalysisResult.objects.filter(pk=row_id),
            token=token,
            status=Status.DONE,
            result=stored,
            n_scores=len(inputs.scores),
            seconds=seconds,
            computed_at=now,
            finished_at=now,
            cells_done=F("cells_total"),
        )
        if finished != 1:
            raise AnalysisClaimLost(f"analysis {row_id} was claimed by another computation before it finished")
    except (AnalysisClaimLost, *OUTAGE_ERRORS):
        raise  # an outage is not the analysis's failure: its lease runs out and it is computed again
    except Exception as exc:
        lease_release(
            AnalysisResult.objects.filter(pk=row_id),
            token=token,
            status=Status.FAILED,
            error=f"{type(exc).__name__}: {exc}"[:4000],
            finished_at=timezone.now(),
        )
        raise
    return analysis_from_stored(
        audit,
        parameters,
        stored,
        design=inputs.design,
        fingerprint=fingerprint,
        computed_at=now,
        seconds=seconds,
        n_scores=len(inputs.scores),
        from_cache=False,
    )


# --- the doors ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReadyAnalysis:
    """A done analysis on the current scores, its stored result not read yet: what a page keys a cache of
    what it renders from the analysis on (`key`); `load()` reads the analysis."""

    audit: Audit
    parameters: AnalysisParameters
    row: AnalysisResult
    fingerprint: str

    @property
    def key(self) -> str:
        """Changes whenever the analysis does: its row, when it was computed, the scores, the parameters."""
        computed_at = self.row.computed_at.isoformat() if self.row.computed_at else ""
        return f"{self.row.pk}:{computed_at}:{self.fingerprint}:{parameters_hash(self.parameters)}"

    def load(self, *, exclusion_counts: ExclusionCounts | None = None) -> AuditAnalysis:
        """The analysis; `exclusion_counts`: what stands behind each cell, when the caller has just read it."""
        analysis = analysis_from_row(self.row, self.parameters, self.fingerprint)
        analysis._exclusion_counts = exclusion_counts
        return analysis


def analysis_request_ready(
    *, audit: Audit, parameters: AnalysisParameters | None = None
) -> ReadyAnalysis | AnalysisState:
    """`analysis_request` without reading the stored result: the done analysis as a `ReadyAnalysis`, or the
    state of one on its way (queued on a worker as `analysis_request` does). Never computes."""
    parameters = parameters or AnalysisParameters()
    row, fingerprint = _ensure(audit, parameters)
    if row.status == Status.DONE:
        row.audit = audit
        return ReadyAnalysis(audit, parameters, row, fingerprint or row.scores_fingerprint)
    return AnalysisState.of(row)


def analysis_request(*, audit: Audit, parameters: AnalysisParameters | None = None) -> AuditAnalysis | AnalysisState:
    """The audit's analysis under `parameters` if it is done on the current scores; otherwise its state,
    after making sure a worker will compute it (see the module docstring). Never computes."""
    found = analysis_request_ready(audit=audit, parameters=parameters)
    return found.load() if isinstance(found, ReadyAnalysis) else found


def analysis_start(*, audit_id: int) -> None:
    """Queue a finished audit's default analysis for a worker unless it is done on the current scores (the
    audit just finished, or a judging run changed its scores), so it is ready before anyone opens it. An audit
    with no finished dialogue has nothing to analyse; `ANALYSIS_ON_FINISH` off leaves it to the first request."""
    if not settings.ANALYSIS_ON_FINISH:
        return
    audit = Audit.objects.filter(pk=audit_id, status=Audit.Status.FINISHED).first()
    if audit is not None and audit.dialogues.filter(status=Dialogue.Status.DONE).exists():
        _ensure(audit, AnalysisParameters(), send=True)


def analysis_state(*, audit: Audit, parameters: AnalysisParameters | None = None) -> AnalysisState:
    """Where the analysis stands (what the progress state polls), queueing it as `analysis_request` does;
    reads one row while a live computation holds it."""
    row, _ = _ensure(audit, parameters or AnalysisParameters())
    return AnalysisState.of(row)


def analysis_retry(*, audit: Audit, parameters: AnalysisParameters | None = None) -> AnalysisState:
    """Queue a failed analysis again (the retry button); any other row is left to `analysis_state`."""
    parameters = parameters or AnalysisParameters()
    row = _row(audit, parameters_hash(parameters))
    if row is not None and row.status == Status.FAILED:
        _requeue(row, scores_fingerprint(audit), send=True)
    return analysis_state(audit=audit, parameters=parameters)


def analysis_current(*, audit: Audit, parameters: AnalysisParameters | None = None) -> AuditAnalysis | None:
    """The stored analysis if it is done on the current scores, else None; starts nothing (the dashboard)."""
    parameters = parameters or AnalysisParameters()
    row = _row(audit, parameters_hash(parameters))
    if row is None or row.status != Status.DONE:
        return None
    fingerprint = scores_fingerprint(audit)
    if row.scores_fingerprint != fingerprint:
        return None
    row.audit = audit
    return analysis_from_row(row, parameters, fingerprint)


def analysis_run(*, analysis_result_id: int) -> str:
    """The task's body: claim the queued row and compute it. Safe to deliver twice: a row that is done,
    failed or held by a live worker is skipped. Returns what happened (done | failed | skipped | lost)."""
    token = _claim(analysis_result_id, from_statuses=(Status.QUEUED,))
    if token is None:
        return "skipped"
    try:
        _compute(analysis_result_id, token)
    except AnalysisClaimLost:
        logger.warning("analysis %s: claim lost to another computation; its result was not stored", analysis_result_id)
        return "lost"
    except OUTAGE_ERRORS as exc:
        logger.warning("analysis %s interrupted: the database is unreachable (%s)", analysis_result_id, exc)
        drop_connection()
        return "interrupted"
    except Exception:
        logger.exception("analysis %s failed", analysis_result_id)
        return "failed"
    return "done"


def audit_analysis(
    *,
    audit: Audit,
    parameters: AnalysisParameters | None = None,
    progress: Callable[[int, int], None] | None = None,
    wait_seconds: float | None = None,
) -> AuditAnalysis:
    """The audit's analysis under `parameters` (defaults: `AnalysisParameters`'s), computed in this process when it
    is not done on the current scores — the synchronous door for `manage.py audit_report`, tests and benchmarks, on
    the same row the workers use.

    A queued, failed or stale row is claimed and computed here (`progress(cells_done, cells_total)` as it
    goes; an error is stored on the row and raised). A row a live worker is computing is waited for, then
    read; TimeoutError when it is still running after `wait_seconds` (default: the lease).
    """
    parameters = parameters or AnalysisParameters()
    deadline = time.monotonic() + (analysis_lease_seconds() if wait_seconds is None else wait_seconds)
    while True:
        row, fingerprint = _ensure(audit, parameters, send=False)
        if row.status == Status.DONE:
            row.audit = audit
            return analysis_from_row(row, parameters, fingerprint or row.scores_fingerprint)
        if row.status == Status.RUNNING and time.monotonic() < deadline:
            time.sleep(WAIT_POLL_SECONDS)  # a live worker holds it: never two computations of one row
            continue
        if row.status == Status.RUNNING:
            raise TimeoutError(f"analysis {row.pk} of audit {audit.pk} is still running on a worker")
        token = _claim(row.pk, from_statuses=(Status.QUEUED, Status.FAILED))
        if token is None:
            continue  # a worker claimed it a moment ago
        try:
            return _compute(row.pk, token, progress)
        except AnalysisClaimLost:
            continue
