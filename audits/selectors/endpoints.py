"""Reads about model endpoints: the models their servers answered with, and the in-flight limits reported.

They go beyond the endpoints' rows: a model swapped behind the same URL shows here; the worker processes report the
in-flight limits."""

from __future__ import annotations

import time
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.core.cache import cache
from django.db.models import Count, F, Max, Q, QuerySet
from django.utils import timezone

from audits.endpoint_roles import TUTOR
from audits.models import Audit, Dialogue, EndpointLimitStatus, LLMCall, ModelEndpoint
from audits.selectors.audit_totals import audit_totals_version

# A worker's limit status older than this is shown as stale (the worker stopped, or is idle).
LIVE_STATUS_SECONDS = 60


def _reported_rows(rows) -> dict[int, list[dict]]:
    found: dict[int, list[dict]] = defaultdict(list)
    for row in rows:
        found[row["endpoint"]].append(
            {
                "model": row["model"],
                "reported_model": row["reported_model"],
                "calls": row["calls"],
                "last_at": row["last_at"],
                "mismatch": bool(row["reported_model"]) and row["reported_model"] != row["model"],
            }
        )
    for models in found.values():
        models.sort(key=lambda r: (not r["mismatch"], -r["calls"]))
    return dict(found)


def endpoint_model_mismatches(*, endpoints: list[ModelEndpoint] | None = None) -> dict[int, list[dict]]:
    """{endpoint id: [{model, reported_model, calls, last_at, mismatch}]} for ledger calls whose server
    reported a model other than the one configured when the call was made."""
    calls = LLMCall.objects.exclude(reported_model="").exclude(reported_model=F("model"))
    if endpoints is not None:
        calls = calls.filter(endpoint__in=endpoints)
    rows = calls.values("endpoint", "model", "reported_model").annotate(calls=Count("pk"), last_at=Max("created_at"))
    return _reported_rows(rows.order_by())


# While an audit runs, its calls change every moment: the table is recounted at most this often.
RECOUNT_WHILE_RUNNING_SECONDS = 60


@dataclass(frozen=True)
class ReportedModels:
    """The run page's "models the servers reported": per endpoint, its models (`rows`), when they were counted, and
    whether they are recounted on a clock (while the audit runs) rather than on every change."""

    rows: list[dict]
    counted_at: datetime
    on_a_clock: bool
    recount_seconds: int = RECOUNT_WHILE_RUNNING_SECONDS


def audit_reported_models(*, audit: Audit) -> ReportedModels:
    """Per endpoint of the audit, the calls its dialogues used counted by the model the server reported,
    each flagged when it differs from the configured model.

    Counting them reads every call the audit's dialogues used (seconds at tens of thousands of dialogues), so the
    answer is kept in the shared cache. While the audit runs, the key is a clock that moves every
    RECOUNT_WHILE_RUNNING_SECONDS (its totals move with every call, and a recount per view would cost the workers
    too); otherwise the key is the audit's running totals: any call a dialogue pays for or reuses, and any dialogue or
    judged turn written, changes it."""
    running = audit.status == Audit.Status.RUNNING
    if running:
        state = f"{audit.created_at.isoformat()}-running-{int(time.time() // RECOUNT_WHILE_RUNNING_SECONDS)}"
    else:
        state = audit_totals_version(audit)
    key = f"audit-reported-models:{audit.pk}:{state}"
    timeout = 2 * RECOUNT_WHILE_RUNNING_SECONDS if running else 24 * 3600
    rows, counted_at = cache.get_or_set(key, lambda: (_audit_reported_models(audit), timezone.now()), timeout=timeout)
    return ReportedModels(rows=rows, counted_at=counted_at, on_a_clock=running)


def _audit_reported_models(audit: Audit) -> list[dict]:
    rows = (
        Dialogue.calls.through.objects.filter(dialogue__audit=audit)
        .values(endpoint=F("llmcall__endpoint"), model=F("llmcall__model"), reported_model=F("llmcall__reported_model"))
        .annotate(calls=Count("llmcall_id", distinct=True), last_at=Max("llmcall__created_at"))
        .order_by()
    )
    by_endpoint = _reported_rows(rows)
    endpoints = ModelEndpoint.objects.in_bulk([pk for pk in by_endpoint if pk is not None])
    return [
        {
            "endpoint_id": pk,
            "endpoint": str(endpoints[pk]) if pk in endpoints else "(deleted endpoint)",
            "models": models,
            "mismatch": any(m["mismatch"] for m in models),
        }
        for pk, models in sorted(by_endpoint.items(), key=lambda item: item[0] or 0)
    ]


def endpoint_limit_statuses(*, endpoints: list[ModelEndpoint]) -> list[dict]:
    """The in-flight limit each worker process last reported for these endpoints, newest first."""
    now = timezone.now()
    rows = (
        EndpointLimitStatus.objects.filter(endpoint__in=endpoints, updated_at__gte=now - timedelta(hours=1))
        .select_related("endpoint")
        .order_by("endpoint__name", "-updated_at")
    )
    return [
        {
            "endpoint_id": row.endpoint_id,
            "endpoint": str(row.endpoint),
            "worker": row.worker,
            "limit": row.limit,
            "ceiling": row.ceiling,
            "in_flight": row.in_flight,
            "waiting": row.waiting,
            "rate_limited": row.rate_limited,
            "decreases": row.decreases,
            "waited_seconds": row.waited_seconds,
            "age_seconds": (now - row.updated_at).total_seconds(),
            "live": (now - row.updated_at).total_seconds() <= LIVE_STATUS_SECONDS,
        }
        for row in rows
    ]


def endpoints_for_role(*, role: str) -> QuerySet[ModelEndpoint]:
    """The endpoints that may play `role` in an audit (`audits.endpoint_roles`), by name: the launch form's lists.
    Filtered here rather than by a JSON lookup, which SQLite lacks; the endpoints are a short list."""
    ids = [pk for pk, roles in ModelEndpoint.objects.values_list("pk", "roles") if role in (roles or [])]
    return ModelEndpoint.objects.filter(pk__in=ids)


def endpoint_list() -> QuerySet[ModelEndpoint]:
    """Every endpoint: the endpoints page, the API and the forms' choices."""
    return ModelEndpoint.objects.all()


def tutor_endpoints_except(*, taken: list[int]) -> QuerySet[ModelEndpoint]:
    """The endpoints with the tutor role, less those taken (as the student or the judge): the launch form's tutors."""
    return endpoints_for_role(role=TUTOR).exclude(pk__in=taken)


def endpoint_by_reference(reference) -> ModelEndpoint | None:
    """The endpoint named `reference`, or with it as its id (a config file names endpoints either way)."""
    text = str(reference)
    return ModelEndpoint.objects.filter(Q(name=text) | Q(pk=int(text) if text.isdigit() else None)).first()
