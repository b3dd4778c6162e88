"""Reads behind the judge-corrected contrasts: the judge's score on every tutor turn, as numpy columns.

The scores are the judge's usable ones on every tutor turn of an audit's finished dialogues, one row per (turn,
turn-level metric), with the turn's tutor, domain, condition and question, read in one query."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from audits.models import Audit, Dialogue, Turn, TurnScore


@dataclass(frozen=True)
class TurnJudgeScores:
    """One row per (tutor turn, metric) the judge scored (status ok, value ≥ 0) under the audit's rubric."""

    turn: np.ndarray  # int64 Turn ids
    metric: np.ndarray  # str
    value: np.ndarray  # float64
    tutor: np.ndarray  # int64 ModelEndpoint ids
    domain: np.ndarray  # str
    condition: np.ndarray  # int64 Condition ids
    question: np.ndarray  # int64 Question ids

    def __len__(self) -> int:
        return int(self.value.size)


def audit_turn_judge_scores(audit: Audit, *, metrics: tuple[str, ...] | None = None) -> TurnJudgeScores:
    """The judge's scores of the tutor turns of the audit's finished dialogues, for the turn-level `metrics`
    (default: those its rubric version asks for): not applicable (−1), unparsable and failed judgements left out."""
    metrics = audit.judge_template.judge_metrics if metrics is None else metrics
    rows = list(
        TurnScore.objects.filter(
            audit=audit,
            dialogue__audit=audit,
            dialogue__status=Dialogue.Status.DONE,
            turn__role=Turn.Role.TUTOR,
            rubric_id=audit.judge_template_id,
            status=TurnScore.Status.OK,
            value__gte=0,
            metric__in=metrics,
        )
        .order_by()
        .values_list(
            "turn_id",
            "metric",
            "value",
            "dialogue__tutor_id",
            "dialogue__question__domain",
            "dialogue__condition_id",
            "dialogue__question_id",
        )
    )
    if not rows:
        empty_int, empty_str = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=str)
        return TurnJudgeScores(
            turn=empty_int,
            metric=empty_str,
            value=np.zeros(0),
            tutor=empty_int,
            domain=empty_str,
            condition=empty_int,
            question=empty_int,
        )
    turn, metric, value, tutor, domain, condition, question = zip(*rows, strict=True)
    return TurnJudgeScores(
        turn=np.asarray(turn, dtype=np.int64),
        metric=np.asarray(metric, dtype=str),
        value=np.asarray(value, dtype=np.float64),
        tutor=np.asarray(tutor, dtype=np.int64),
        domain=np.asarray(domain, dtype=str),
        condition=np.asarray(condition, dtype=np.int64),
        question=np.asarray(question, dtype=np.int64),
    )
