"""Reads of running audits: progress, cost, transcripts, a clone's changed objects and the frame of scores.

Progress is the dialogues' row counts and the running totals kept as calls and judgements are written; the objects
read for a clone are those its changed factor names; the frame of scores is the long one that `audits.fairness`
analyses (or one cell of it)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from django.db.models import Avg, Count, Min, Q, QuerySet
from django.utils import timezone

from audits.conditions import ConditionChoice, analysis_design
from audits.judge import CONVERSATION_METRICS, METRICS, STUDENT_METRICS
from audits.llm.dialogue import requests_preview
from audits.models import (
    Audit,
    AuditCallTally,
    AuditTally,
    Condition,
    Dialogue,
    LLMCall,
    ModelEndpoint,
    PromptTemplate,
    TurnScore,
)
from audits.run_outcome import LABELS, TONES, group_failures, host_of, run_outcome
from audits.selectors.design import design_dimensions
from audits.selectors.endpoints import endpoint_limit_statuses


def _audit_tally(audit: Audit) -> AuditTally:
    """The audit's dialogues by status, the calls they reused and its turns by the judge's verdict, as the database
    keeps them (`audits.models.progress`): one row, whatever the audit's size."""
    return AuditTally.objects.filter(audit=audit).first() or AuditTally(audit=audit)


def audit_run_outcome(*, audit: Audit) -> str:
    """The run's outcome (audits.run_outcome) from the audit's tally, for pages that need only that."""
    tally = _audit_tally(audit)
    return run_outcome(audit.status, done=tally.done, failed=tally.failed)


def audit_progress(*, audit: Audit) -> dict:
    """Everything the audit page's live panel shows, computed from rows (never from the broker)."""
    tally = _audit_tally(audit)
    done, failed = tally.done, tally.failed
    total = tally.pending + tally.running + done + failed + tally.cancelled
    finished = done + failed + tally.cancelled
    # What the audit paid for, per endpoint: running totals kept as the ledger rows are written
    # (audits.services.progress_tally), so the panel never reads the ledger.
    tallies = [row for row in AuditCallTally.objects.filter(audit=audit).order_by("endpoint_ref") if row.calls]
    paid_totals = {name: sum(getattr(row, name) for row in tallies) for name in CALL_TOTALS}
    # Every model call a dialogue made that was answered without sending: from the ledger (paid earlier
    # by another dialogue of this audit or by another audit) or shared with an identical request in
    # flight. Each dialogue counts its own when it is written, so this is the sum over its dialogue rows
    # (a count of distinct ledger rows would miss every call shared within the audit), kept in the tally.
    reused = tally.calls_cached
    endpoints = ModelEndpoint.objects.in_bulk([row.endpoint_ref for row in tallies])
    cost_rows = [_cost_row(endpoints.get(ref), rows) for ref, rows in _by_endpoint(tallies, endpoints).items()]
    elapsed = None
    if audit.launched_at:
        end = audit.finished_at or timezone.now()
        elapsed = max(0.0, (end - audit.launched_at).total_seconds())
    # Rates describe work in progress (or a finished run): a paused or cancelled audit has none.
    rated = audit.status in (Audit.Status.RUNNING, Audit.Status.FINISHED)
    outcome = run_outcome(audit.status, done=done, failed=failed)
    failures = list(
        audit.dialogues.filter(status=Dialogue.Status.FAILED)
        .order_by("-finished_at", "-pk")
        .values("pk", "error", "end_reason")[:10]
    )
    calls = paid_totals["calls"]
    return {
        "status": audit.status,
        "total": total,
        "pending": tally.pending,
        "running": tally.running,
        "done": done,
        "failed": failed,
        "cancelled": tally.cancelled,
        "percent": int(100 * finished / total) if total else 0,
        "calls_sent": calls,
        # An unparsable answer was answered (and paid for) but never used: counted apart from failures.
        "calls_failed": calls - paid_totals["ok"] - paid_totals["unparsable"],
        "calls_unparsable": paid_totals["unparsable"],
        "calls_reused": reused,
        "retries": paid_totals["attempts"] - calls,
        "prompt_tokens": paid_totals["prompt_tokens"],
        "completion_tokens": paid_totals["completion_tokens"],
        # Of the completion tokens, those the models spent reasoning (billed as output, never shown as a turn).
        "reasoning_tokens": paid_totals["reasoning_tokens"],
        "cost": sum(row["cost"] for row in cost_rows),
        "cost_by_endpoint": cost_rows,
        "turns_scored": tally.turns_ok,
        "turns_unparsable": tally.turns_unparsable,
        "turns_judge_failed": tally.turns_failed,
        "failures": failures,
        "outcome": outcome,
        "outcome_label": LABELS.get(outcome, outcome),
        "outcome_tone": TONES.get(outcome, ""),
        "failure_groups": dialogue_failure_groups(audit=audit) if failed else [],
        "call_failure_groups": call_failure_groups(audit=audit) if failed else [],
        "elapsed_seconds": elapsed,
        "dialogues_per_minute": (60 * finished / elapsed) if elapsed and rated else None,
        "calls_per_second": (calls / elapsed) if elapsed and rated else None,
        "simulation": audit.uses_simulation,
        # The in-flight limit (AIMD) and 429s each worker process reports per endpoint of the audit.
        "endpoint_limits": endpoint_limit_statuses(endpoints=audit.endpoints()),
    }


CALL_TOTALS = ("calls", "ok", "unparsable", "attempts", "prompt_tokens", "completion_tokens", "reasoning_tokens")


def _by_endpoint(tallies: list[AuditCallTally], endpoints: dict) -> dict:
    """The tallies by endpoint; those of deleted endpoints together (ref None), as the ledger's rows group them."""
    grouped: dict = {}
    for row in tallies:
        grouped.setdefault(row.endpoint_ref if row.endpoint_ref in endpoints else None, []).append(row)
    return grouped


def _cost_row(endpoint: ModelEndpoint | None, rows: list[AuditCallTally]) -> dict:
    def total(name: str):
        return sum(getattr(row, name) for row in rows)

    return {
        "endpoint": str(endpoint) if endpoint else "(deleted endpoint)",
        "simulation": bool(endpoint and endpoint.is_simulation),
        "calls": total("calls"),
        "prompt_tokens": total("prompt_tokens"),
        "completion_tokens": total("completion_tokens"),
        "cost": endpoint.cost(total("billed_prompt"), total("billed_completion")) if endpoint else 0.0,
    }


def dialogue_failure_groups(*, audit: Audit) -> list:
    """The audit's failed dialogues grouped by their error, largest group first, each with an example."""
    rows = (
        audit.dialogues.filter(status=Dialogue.Status.FAILED)
        .values("error")
        .annotate(n=Count("pk"), example=Min("pk"))
        .order_by("-n")[:50]
    )
    return [asdict(group) for group in group_failures((row["error"], "", row["n"], row["example"]) for row in rows)]


def call_failure_groups(*, audit: Audit) -> list:
    """The model calls this audit paid for that failed, grouped by error and by the host they went to."""
    rows = (
        LLMCall.objects.filter(first_audit=audit, status=LLMCall.Status.FAILED)
        .values("error", "endpoint__base_url")
        .annotate(n=Count("pk"))
        .order_by("-n")[:50]
    )
    groups = group_failures((row["error"], host_of(row["endpoint__base_url"] or ""), row["n"], None) for row in rows)
    return [asdict(group) for group in groups]


def audit_for_config_hash(*, config_hash: str) -> Audit | None:
    """The newest audit created from a config with this content hash that can still run (not cancelled)."""
    return Audit.objects.filter(config_hash=config_hash).exclude(status=Audit.Status.CANCELLED).order_by("-pk").first()


def audit_list(*, user=None):
    return (
        Audit.objects.annotate(
            n_dialogues=Count("dialogues"),
            n_done=Count("dialogues", filter=Q(dialogues__status=Dialogue.Status.DONE)),
            n_failed=Count("dialogues", filter=Q(dialogues__status=Dialogue.Status.FAILED)),
        )
        .select_related("student_endpoint", "judge_endpoint")
        .order_by("-pk")
    )


CLONE_CONDITION_FIELDS = {
    "control": bool,
    "explicit_dimensions": list,
    "intersectional_dimensions": list,
    "implicit": bool,
    "names_per_cell": int,
    "tell_tutor_name": bool,
    "opposite": bool,
}


def clone_conditions(value) -> ConditionChoice:
    """A clone's conditions as the launch form's condition fields give them (an object of those fields; one left
    out takes the launch form's default), checked as the launch form checks them."""
    if not isinstance(value, dict):
        raise ValueError(f"conditions are an object with the fields {', '.join(CLONE_CONDITION_FIELDS)}")
    unknown = sorted(set(value) - set(CLONE_CONDITION_FIELDS))
    if unknown:
        raise ValueError(f"unknown condition field {unknown[0]!r}; the fields are {', '.join(CLONE_CONDITION_FIELDS)}")
    known = {key for key, _ in design_dimensions()}
    choice = {}
    for name, kind in CLONE_CONDITION_FIELDS.items():
        given = value.get(name)
        if given is None:
            continue
        if kind is int and (isinstance(given, bool) or not isinstance(given, int) or given < 1):
            raise ValueError(f"{name} is a whole number of at least 1, or null for every name")
        if kind is bool and not isinstance(given, bool):
            raise ValueError(f"{name} is true or false")
        if kind is list:
            if not isinstance(given, list) or not all(isinstance(d, str) for d in given):
                raise ValueError(f"{name} is a list of dimension keys")
            strange = [d for d in given if d not in known]
            if strange:
                raise ValueError(f"{name}: no dimension {strange[0]!r}; the dimensions are {', '.join(sorted(known))}")
            given = tuple(given)
        choice[name] = given
    if len(choice.get("intersectional_dimensions", ())) == 1:
        raise ValueError("intersectional_dimensions: cross at least two dimensions, or none")
    return ConditionChoice(**choice)


def clone_factor_value(factor: str, value):
    """The object a clone factor names (`audits.services.audit_lifecycle.audit_clone`), from the id (or
    seed, or the conditions' fields) a form or the API sends."""
    if factor == "conditions":
        return clone_conditions(value)
    if factor == "seed":
        return int(value)
    if factor == "tutors":
        ids = [int(v) for v in (value if isinstance(value, list) else [value])]
        tutors = list(ModelEndpoint.objects.filter(pk__in=ids))
        if len(tutors) != len(set(ids)):
            raise ValueError("unknown tutor endpoint id")
        return tutors
    if factor == "judge_template":
        template = PromptTemplate.objects.get(pk=int(value))
        if template.kind != "judge_rubric":
            raise ValueError("the judge template must be a judge_rubric template")
        return template
    if factor == "check_endpoint" and value in (None, ""):
        return None
    return ModelEndpoint.objects.get(pk=int(value))


def dialogue_transcript(*, dialogue: Dialogue) -> dict:
    """A dialogue with its turns, each tutor turn's scores, and the raw calls it used."""
    turns = list(dialogue.turns.select_related("llm_call").order_by("index"))
    scores: dict[int, list[TurnScore]] = defaultdict(list)
    # By its turns: the turn index finds them (`dialogue` alone has none: an audit's reads start from its audit).
    by_turn = TurnScore.objects.filter(turn_id__in=[turn.pk for turn in turns])
    for score in by_turn.select_related("rubric").order_by("metric"):
        scores[score.turn_id].append(score)
    return {
        "dialogue": dialogue,
        "condition": dialogue.condition,
        "turns": [{"turn": turn, "scores": sorted(scores[turn.pk], key=_metric_order)} for turn in turns],
        "calls": list(dialogue.calls.order_by("pk")),
    }


def _metric_order(score: TurnScore) -> int:
    return METRICS.index(score.metric) if score.metric in METRICS else len(METRICS)


FRAME_COLUMNS = (
    "dialogue",
    "tutor",
    "tutor_name",
    "domain",
    "question",
    "condition",
    "condition_key",
    "kind",
    "dimension",
    "level",
    "name_cue",
    "name_gender",
    "name_ethnicity",
    "stated_gender",
    "perceived_gender",
    "metric",
    "value",
)


@dataclass(frozen=True)
class FrameCell:
    """One cell of an audit's frame: a tutor's dialogues of one domain under some conditions, some metrics."""

    tutor: int
    domain: str
    conditions: tuple[int, ...]
    metrics: tuple[str, ...]


def judged_dialogue_means(audit: Audit, **filters: Any) -> QuerySet:
    """Each (dialogue, metric)'s score from the judge: the mean of its usable values (ok, not −1) on the dialogue's
    tutor turns under the audit's rubric, as dicts (dialogue_id, metric, mean) by dialogue and metric, read from the
    audit's own scores; ``filters`` choose among them (e.g. ``dialogue_id__in=…``)."""
    return (
        TurnScore.objects.filter(
            audit=audit, rubric_id=audit.judge_template_id, status=TurnScore.Status.OK, value__gte=0, **filters
        )
        .values("dialogue_id", "metric")
        .annotate(mean=Avg("value"))
        .order_by("dialogue_id", "metric")
    )


def audit_scores_frame(
    audit: Audit, *, include_conversation_metrics: bool = True, cell: FrameCell | None = None
) -> dict[str, np.ndarray]:
    """The audit's dialogue scores as a long frame of numpy columns (`FRAME_COLUMNS`), one row per
    (dialogue, metric), for `audits.fairness`.

    A turn-level metric's dialogue score is the mean of the judge's values over the dialogue's tutor
    turns, ignoring −1 (not applicable) and turns without a value (unparsable or failed judgements); a
    dialogue with no applicable turn has no row for that metric. Conversation-level metrics come from
    the transcript, and so do the student's own statistics (`STUDENT_METRICS`, for the simulator check;
    absent for dialogues finished before they were recorded). Only finished (`done`) dialogues are included; with
    `cell`, only that cell's rows are read.
    """
    finished = Dialogue.objects.filter(audit=audit, status=Dialogue.Status.DONE)
    where_scored = {"dialogue__audit": audit, "dialogue__status": Dialogue.Status.DONE}  # both sides read by audit
    conversation_metrics = CONVERSATION_METRICS + STUDENT_METRICS
    if cell is not None:
        where = {"tutor_id": cell.tutor, "question__domain": cell.domain, "condition_id__in": cell.conditions}
        finished = finished.filter(**where)
        where_scored.update(metric__in=cell.metrics, **{f"dialogue__{k}": v for k, v in where.items()})
        conversation_metrics = tuple(m for m in conversation_metrics if m in cell.metrics)
    scored = judged_dialogue_means(audit, **where_scored)
    dialogues = {
        row["pk"]: row
        for row in finished.values(
            "pk",
            "tutor_id",
            "tutor__name",
            "question_id",
            "question__domain",
            "condition_id",
            "condition__key",
            "condition__kind",
            "condition__dimension",
            "condition__level",
            "condition__name_cue",
            "condition__name_gender",
            "condition__name_ethnicity",
            "condition__stated_gender",
            "condition__perceived_gender",
            "metrics",
        )
    }
    rows: list[tuple] = [(row["dialogue_id"], row["metric"], float(row["mean"])) for row in scored]
    if include_conversation_metrics:
        for pk, row in dialogues.items():
            for metric in conversation_metrics:
                value = (row["metrics"] or {}).get(metric)
                if value is not None:
                    rows.append((pk, metric, float(value)))
    columns: dict[str, list] = {name: [] for name in FRAME_COLUMNS}
    for dialogue_id, metric, value in rows:
        d = dialogues[dialogue_id]
        columns["dialogue"].append(dialogue_id)
        columns["tutor"].append(d["tutor_id"])
        columns["tutor_name"].append(d["tutor__name"])
        columns["domain"].append(d["question__domain"])
        columns["question"].append(d["question_id"])
        columns["condition"].append(d["condition_id"])
        columns["condition_key"].append(d["condition__key"])
        columns["kind"].append(d["condition__kind"])
        columns["dimension"].append(d["condition__dimension"])
        columns["level"].append(d["condition__level"])
        columns["name_cue"].append(d["condition__name_cue"])
        columns["name_gender"].append(d["condition__name_gender"])
        columns["name_ethnicity"].append(d["condition__name_ethnicity"])
        columns["stated_gender"].append(d["condition__stated_gender"])
        columns["perceived_gender"].append(d["condition__perceived_gender"])
        columns["metric"].append(metric)
        columns["value"].append(value)
    # Text columns as numpy unicode arrays (what audits.fairness.ScoreFrame expects), ids as int64.
    frame = {name: np.asarray(values, dtype=str) for name, values in columns.items()}
    for name in ("dialogue", "tutor", "question", "condition"):
        frame[name] = np.asarray(columns[name], dtype=np.int64)
    frame["value"] = np.asarray(columns["value"], dtype=np.float64)
    return frame


def audit_condition_design(audit: Audit) -> dict:
    """{condition id: audits.fairness.ConditionSpec} for the audit's conditions (the design mapping), in
    creation order — converted as the design preview converts them (`audits.conditions.analysis_design`),
    so the analysis reports the contrasts the preview listed."""
    return analysis_design({condition.pk: condition for condition in Condition.objects.filter(audit=audit)})


def audit_requests_sent(*, audit: Audit) -> list[dict]:
    """What each of the audit's models is sent with every request, per role (audits.llm.dialogue.requests_preview):
    the run page states it, the student's temperature above all, which a reasoning model cannot take."""
    return requests_preview(
        tutors=[tutor.to_config() for tutor in audit.tutors.all()],
        student=audit.student_endpoint.to_config(),
        judge=audit.judge_endpoint.to_config(),
        check=audit.check_endpoint.to_config() if audit.check_endpoint_id else None,
    )
