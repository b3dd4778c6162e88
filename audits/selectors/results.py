"""Reads behind the fairness results: an audit's scores and design, their fingerprint, and what exports show.

They are: an audit's scores and design in the form `audits.fairness` takes, the fingerprint that says whether cached
results are still current, the judge's validation status and the metrics whose judge failed it, one contrast cell's
scores and the dialogues behind it, and the raw dialogue scores for export."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

import numpy as np
from django.core.cache import cache
from django.db.models import Count, Max, Q, Sum

from audits.exclusions import ExclusionCounts
from audits.fairness import ConditionSpec, Contrast, ScoreFrame, contrast_pairs
from audits.models import Audit, Condition, Dialogue, Question, TurnScore
from audits.selectors.audit_totals import audit_totals_version
from audits.selectors.judge_validation import audit_judge_validation
from audits.selectors.runs import FRAME_COLUMNS, FrameCell, audit_condition_design, audit_scores_frame


def judge_validation_status(audit: Audit) -> str:
    """Whether the audit's judge (endpoint + rubric version) has been validated against human labels.

    Until a validation of the judge endpoint under the rubric version is recorded, every audit reports
    "not validated" on its page and in every export. The answer comes from
    `audits.selectors.judge_validation` (a recorded validation of this judge endpoint under this rubric
    version); its `JudgeValidationStatus` also lists the failed metrics.
    """
    return audit_judge_validation(audit).text


def judge_failed_metrics(audit: Audit) -> set[str]:
    """The metrics whose judge did not pass the recorded validation (fail or undecided): every table,
    heatmap and export marks them. Empty when the judge was never validated — "not validated" is said once,
    in the methods, not on every metric."""
    return set(audit_judge_validation(audit).failed_metrics)


def scores_fingerprint(audit: Audit) -> str:
    """A hash that changes whenever anything the analysis reads changes: the finished dialogues (count,
    largest id, last finish time), the judge's scores under the audit's rubric (count, largest id, sum of
    values, count usable) and the conditions' design fields."""
    dialogues = Dialogue.objects.filter(audit=audit, status=Dialogue.Status.DONE).aggregate(
        n=Count("pk"), last_id=Max("pk"), last_finished=Max("finished_at")
    )
    scores = TurnScore.objects.filter(audit=audit, rubric_id=audit.judge_template_id).aggregate(
        n=Count("pk"),
        last_id=Max("pk"),
        total=Sum("value"),
        usable=Count("pk", filter=Q(status=TurnScore.Status.OK)),
    )
    conditions = list(
        Condition.objects.filter(audit=audit)
        .order_by("pk")
        .values_list(
            "pk", "kind", "dimension", "level", "name_gender", "name_ethnicity", "stated_gender", "perceived_gender"
        )
    )
    payload = json.dumps([audit.judge_template_id, dialogues, scores, conditions], default=str, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()


@dataclass(frozen=True)
class AnalysisInputs:
    """What `audits.fairness.analyze` needs, plus the long frame's descriptive columns for exports."""

    scores: ScoreFrame  # turn-level and conversation-level metrics, condition = Condition pk
    design: dict[int, ConditionSpec]
    frame: dict[str, np.ndarray]  # audits.selectors.runs.FRAME_COLUMNS


def audit_analysis_inputs(audit: Audit) -> AnalysisInputs:
    """The audit's dialogue scores (every metric) and its design, keyed by condition id.

    Conditions that give the statistics nothing to compare (an implicit name that cues neither gender nor
    ethnicity) are left out of the design, and so are their scores.
    """
    design = audit_condition_design(audit)
    frame = audit_scores_frame(audit, include_conversation_metrics=True)
    keep = np.isin(frame["condition"], np.asarray(list(design), dtype=np.int64))
    if not keep.all():
        frame = {name: column[keep] for name, column in frame.items()}
    scores = _score_frame(frame)
    return AnalysisInputs(scores=scores, design=design, frame=frame)


def _score_frame(frame: dict[str, np.ndarray]) -> ScoreFrame:
    names = ("tutor", "domain", "question", "condition", "metric", "value")
    return ScoreFrame(**{name: frame[name] for name in names})


def audit_cell_pairs(
    audit: Audit, *, tutor: int, domain: str, contrast: Contrast, metric: str, metrics: tuple[str, ...]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(questions, side A values, side B values) of one contrast cell (`audits.fairness.contrast_pairs`), reading
    only that cell's rows: the tutor's dialogues of the domain under the contrast's conditions, the table's
    `metrics` (they decide which questions the cell resamples)."""
    design = audit_condition_design(audit)
    sides = side_condition_ids(contrast.side_a) + side_condition_ids(contrast.side_b)
    cell = FrameCell(tutor=tutor, domain=domain, conditions=tuple(c for c in sides if c in design), metrics=metrics)
    frame = audit_scores_frame(audit, include_conversation_metrics=True, cell=cell)
    if not frame["value"].size:
        return np.empty(0, dtype=np.int64), np.empty(0), np.empty(0)
    scores = _score_frame(frame)
    questions = Question.objects.filter(pk__in=np.unique(frame["question"]).tolist())
    keys = dict(questions.values_list("pk", "content_hash"))
    return contrast_pairs(
        scores,
        design,
        tutor=tutor,
        domain=domain,
        contrast=contrast,
        metric=metric,
        metrics=metrics,
        question_keys=keys,
    )


def audit_content_identities(audit: Audit) -> tuple[dict[int, str], dict[int, str]]:
    """(tutor id → the endpoint's content identity, question id → its content hash): what the analysis
    seeds and orders its bootstrap by, so identical dialogues give identical CIs in any audit, on any
    database. A tutor's identity is what makes it answer the same request the same way (provider, URL,
    model, simulation settings) plus its sampling settings — never a database id or a display name."""
    tutors = {}
    for tutor in audit.tutors.all():
        identity = tutor.to_config().identity()
        identity.update(temperature=tutor.temperature, max_tokens=tutor.max_tokens, extra=tutor.extra_params or {})
        tutors[tutor.pk] = json.dumps(identity, sort_keys=True, default=str)
    questions = dict(
        Dialogue.objects.filter(audit=audit).values_list("question_id", "question__content_hash").distinct()
    )
    return tutors, questions


def audit_exclusion_counts_current(audit: Audit, fingerprint: str) -> ExclusionCounts:
    """`audit_exclusion_counts`, kept in the shared cache under the scores' `fingerprint` (just read by the caller)
    and the audit's running totals (its dialogues by status, its turns by verdict): the same counts while neither
    changes, so a results page does not recount an audit's every score on each view."""
    key = f"audit-exclusions:{audit.pk}:{fingerprint}:{audit_totals_version(audit)}"
    return cache.get_or_set(key, lambda: audit_exclusion_counts(audit), timeout=24 * 3600)


def audit_exclusion_counts(audit: Audit) -> ExclusionCounts:
    """Dialogues per (tutor, domain, condition) by status, and the judge's per-metric verdicts on the tutor
    turns of finished dialogues per (tutor, domain, condition, metric): scored, unparsable, failed, not
    applicable (−1). Two aggregate queries; read live, so failures after the analysis are still counted."""
    dialogues: dict[tuple, dict[str, int]] = {}
    for row in (
        Dialogue.objects.filter(audit=audit)
        .values("tutor_id", "question__domain", "condition_id", "status")
        .annotate(n=Count("pk"))
        .order_by()
    ):
        by_state = dialogues.setdefault((row["tutor_id"], row["question__domain"], row["condition_id"]), {})
        by_state["planned"] = by_state.get("planned", 0) + row["n"]
        state = "pending" if row["status"] == Dialogue.Status.RUNNING else row["status"]
        by_state[state] = by_state.get(state, 0) + row["n"]
    turns: dict[tuple, dict[str, int]] = {}
    ok = Q(status=TurnScore.Status.OK)
    for row in (
        TurnScore.objects.filter(
            audit=audit, dialogue__audit=audit, dialogue__status=Dialogue.Status.DONE, rubric_id=audit.judge_template_id
        )
        .values("dialogue__tutor_id", "dialogue__question__domain", "dialogue__condition_id", "metric")
        .annotate(
            scored=Count("pk", filter=ok & Q(value__gte=0)),
            not_applicable=Count("pk", filter=ok & Q(value=-1)),
            unparsable=Count("pk", filter=Q(status=TurnScore.Status.UNPARSABLE)),
            failed=Count("pk", filter=Q(status=TurnScore.Status.FAILED)),
        )
        .order_by()
    ):
        key = (
            row["dialogue__tutor_id"],
            row["dialogue__question__domain"],
            row["dialogue__condition_id"],
            row["metric"],
        )
        turns[key] = {state: row[state] for state in ("scored", "not_applicable", "unparsable", "failed")}
    return ExclusionCounts(dialogues=dialogues, turns=turns)


def raw_score_rows(frame: dict[str, np.ndarray]) -> list[dict[str, Any]]:
    """One row per (dialogue, metric) with the condition's fields: the raw scores export."""
    columns = [name for name in FRAME_COLUMNS if name in frame]
    as_lists = {name: frame[name].tolist() for name in columns}
    return [{name: as_lists[name][i] for name in columns} for i in range(len(frame["value"]))]


def audit_tutor_names(audit: Audit) -> dict[int, str]:
    return {tutor.pk: tutor.name for tutor in audit.tutors.all()}


def audit_level_labels(audit: Audit) -> dict[tuple[str, str], str]:
    """(dimension, level) -> the label of the audit's explicit condition that states it (e.g. ("first_language",
    "non_english_l1") -> "First language: Non-English L1"), as the audit stored it."""
    rows = Condition.objects.filter(audit=audit, kind=Condition.Kind.EXPLICIT).values_list(
        "dimension", "level", "label"
    )
    return {(dimension, level): label for dimension, level, label in rows if label}


def side_condition_ids(side: tuple[tuple[Any, ...], ...]) -> list[int]:
    return [int(condition) for group in side for condition in group]


def contrast_side_dialogues(
    *, audit: Audit, tutor_id: int, question_id: int, contrast: Contrast
) -> tuple[list[dict], list[dict]]:
    """The finished dialogues of one question under side A and side B of a contrast, each with its
    turns and the judge's scores per tutor turn (under the audit's rubric)."""
    return (
        _dialogues_with_turns(audit, tutor_id, question_id, side_condition_ids(contrast.side_a)),
        _dialogues_with_turns(audit, tutor_id, question_id, side_condition_ids(contrast.side_b)),
    )


def _dialogues_with_turns(audit: Audit, tutor_id: int, question_id: int, condition_ids: list[int]) -> list[dict]:
    dialogues = list(
        Dialogue.objects.filter(
            audit=audit,
            tutor_id=tutor_id,
            question_id=question_id,
            condition_id__in=condition_ids,
            status=Dialogue.Status.DONE,
        )
        .select_related("condition")
        .order_by("condition_id")
    )
    scores: dict[int, dict[str, Any]] = {}
    cell_scores = TurnScore.objects.filter(audit=audit, rubric_id=audit.judge_template_id, dialogue__in=dialogues)
    for score in cell_scores.values("turn_id", "metric", "value", "status"):
        shown = score["value"] if score["status"] == TurnScore.Status.OK else score["status"]
        scores.setdefault(score["turn_id"], {})[score["metric"]] = "n/a" if shown == -1 else shown
    result = []
    for dialogue in dialogues:
        turns = [{"turn": turn, "scores": scores.get(turn.pk, {})} for turn in dialogue.turns.order_by("index")]
        result.append({"dialogue": dialogue, "condition": dialogue.condition, "turns": turns})
    return result
