"""A finished audit with a judge the humans disagree with, and its human subset, for the judge-corrected tests.

`planted_audit()` writes a one-tutor audit of 16 questions under first_language (control, english_l1,
non_english_l1) with `scored_audit`, then makes the judge harsh on corrective_tone for non_english_l1: every
such turn scored 0, so the judge-only analysis flags english_l1 → non_english_l1. `planted_subset(audit)` labels
half the questions' tutor turns of every condition with the judge's score before it was made harsh (the humans
see no gap), each with inclusion probability 0.5: the corrected interval covers 0, so that flag is "not supported
by humans". Not a test module.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from django.utils import timezone

from audits.fairness import AnalysisParameters
from audits.models import Audit, TurnScore
from audits.services import judge_corrected
from audits.tests.engine_factories import scored_audit

HARSH_METRIC = "corrective_tone"
HARSH_LEVEL = "non_english_l1"
PARAMETERS = AnalysisParameters(n_boot=200)


@dataclass(frozen=True)
class StandInSubset:
    """The fields of annotation's HumanSubset, for tests that plant the labels instead of collecting them."""

    project_id: int
    project_name: str
    rubric_label: str
    labelled_items: int
    updated_at: datetime | None
    values: dict[str, dict[int, tuple[float, float]]] = field(default_factory=dict)


def planted_audit(name: str = "judge-corrected audit") -> tuple[Audit, dict[int, float]]:
    """The audit, and the judge's corrective_tone score of every tutor turn before it was made harsh."""
    audit = scored_audit(name, tutors=1, questions=16, dimensions=("first_language",))
    scores = TurnScore.objects.filter(turn__dialogue__audit=audit, metric=HARSH_METRIC, value__gte=0)
    before = dict(scores.values_list("turn_id", "value"))
    scores.filter(turn__dialogue__condition__level=HARSH_LEVEL).update(value=0)
    return audit, {turn: float(value) for turn, value in before.items()}


def planted_subset(audit: Audit, before: dict[int, float]) -> StandInSubset:
    """Human labels equal to the fair judge's scores on the tutor turns of the first 8 questions, π = 0.5."""
    questions = list(audit.questions.order_by("pk").values_list("pk", flat=True))[:8]
    labelled = TurnScore.objects.filter(
        turn__dialogue__audit=audit, turn__dialogue__question_id__in=questions, metric=HARSH_METRIC
    ).values_list("turn_id", flat=True)
    values = {turn: (before[turn], 0.5) for turn in labelled if turn in before}
    return StandInSubset(
        project_id=1,
        project_name=f"Judge validation of {audit.name}",
        rubric_label="judge rubric v1",
        labelled_items=len(values),
        updated_at=timezone.now(),
        values={HARSH_METRIC: values},
    )


def plant_subset(monkeypatch, subset: StandInSubset | None) -> None:
    """Make the judge-corrected table read `subset` as every audit's human subset."""
    monkeypatch.setattr(judge_corrected, "audit_human_subset", lambda audit: subset)
