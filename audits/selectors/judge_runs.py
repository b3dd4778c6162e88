"""Judging runs as pages, the API and the CLI show them: how each ended, with its cause and its batches.

The outcome is done, done with failures or failed; beside it the turns scored and judged of the total, the cause in
the provider's words, and the run's Batch API batches."""

from __future__ import annotations

from audits.models import JudgeRun

# The API's list shows this many runs, the latest first.
LIST_LIMIT = 100


def judge_run_view(run: JudgeRun) -> dict:
    """A run as pages, the API and the CLI show it: status (done / done with failures / failed), turns
    scored and judged of the total, the cause, its batches (provider state, line counts, the provider's
    reasons), calls sent and reused."""
    batches = [
        {
            "round": b.round,
            "status": b.status,
            "final_status": b.final_status,
            "lines": b.lines,
            "completed": (b.request_counts or {}).get("completed"),
            "answered": b.answered,
            "failed": b.failed,
            "unrun": b.unrun,
            "provider_batch_id": b.provider_batch_id,
            "validation_errors": b.validation_errors or [],
            "error": b.error,
        }
        for b in run.batches.order_by("round", "pk")
    ]
    return {
        "id": run.pk,
        "status": run.status,
        "status_label": run.get_status_display().lower(),
        "open": run.is_open,
        "via_batch": run.via_batch,
        "total": run.total,
        "judged": run.judged,
        "scored": run.scored,
        "percent": int(100 * run.judged / run.total) if run.total else 0,
        "calls_sent": run.calls_sent,
        "calls_cached": run.calls_cached,
        "batches": batches,
        "cause": run.error,
        "error": run.error,
        "cancellable": run.is_open and (run.via_batch or run.status == JudgeRun.Status.QUEUED),
        "cancel_requested_at": run.cancel_requested_at,
        "created_at": run.created_at,
        "finished_at": run.finished_at,
    }


def judge_run_latest(*, owner: str) -> dict | None:
    """The owner's latest run (`judge_run_view`); None: never run."""
    run = JudgeRun.objects.filter(owner=owner).order_by("-pk").first()
    return None if run is None else judge_run_view(run)


def judge_run_by_id(run_id: int) -> dict | None:
    run = JudgeRun.objects.filter(pk=run_id).first()
    return None if run is None else judge_run_view(run)


def judge_runs_list(*, owner: str = "") -> list[dict]:
    """The latest runs (LIST_LIMIT), of one owner when given."""
    runs = JudgeRun.objects.prefetch_related("batches").order_by("-pk")
    if owner:
        runs = runs.filter(owner=owner)
    return [judge_run_view(run) for run in runs[:LIST_LIMIT]]
