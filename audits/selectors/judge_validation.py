"""The audits app's one door into the annotation app: a judge's validation status, measured error and human subset.

Both are read as the annotation app recorded them; no other module of the app imports `annotation`.

A validation is recorded by the judge-validation workflow (a project of human labels on the audit's tutor
turns, compared with the judge); results pages, exports and reports read here whether the audit's judge
(endpoint + rubric version) has one and which metrics it failed — under the named verdict rule, by default
`interval` (κ's interval lower bound reaches the threshold; the status names its rule) — and judge-corrected
contrasts read the human consensus of the sampled turns with their inclusion probabilities. The design preview's
label plan reads the judge's error SD per metric from the newest recorded validation of the chosen judge endpoint
(a pilot).
"""

from __future__ import annotations

from dataclasses import dataclass

from annotation.models import JudgeValidation
from annotation.selectors.judge_validation import (
    HumanSubset,
    JudgeValidationStatus,
    human_subset,
    judge_consensus_pairs,
    judge_validation_status,
)
from audits.judge_corrected import error_sd
from audits.models import Audit

__all__ = [
    "HumanSubset",
    "JudgeErrorSDs",
    "JudgeValidationStatus",
    "audit_human_subset",
    "audit_judge_validation",
    "judge_error_sds",
]


def audit_judge_validation(audit: Audit) -> JudgeValidationStatus:
    """The recorded validation of the audit's own judge under its own rubric version (preferring one made
    on this audit), or "not validated"."""
    return judge_validation_status(audit)


def audit_human_subset(audit: Audit) -> HumanSubset | None:
    """The human truth on the audit's sampled tutor turns: per metric, Turn id → (settled consensus on the
    rubric's scale, inclusion probability), from the newest judge-validation project built from the audit
    under the audit's judge template; None when the audit has none."""
    return human_subset(audit)


@dataclass(frozen=True)
class JudgeErrorSDs:
    """The judge's error SD (judge − human consensus, ddof 1) per metric, as one recorded validation measured it;
    None for a metric with fewer than 2 turns that have both a judge score and a consensus on the scale."""

    validation_id: int
    project_id: int
    judge_name: str
    rubric_label: str
    recorded_at: str
    sds: dict[str, float | None]
    n_pairs: dict[str, int]


def judge_error_sds(judge_endpoint_id: int) -> JudgeErrorSDs | None:
    """The judge's error SD per metric from the newest recorded validation of this judge endpoint (under any
    rubric version), from the same (judge, human consensus) pairs the validation report's label planner uses;
    None when the endpoint has no recorded validation."""
    found = (
        JudgeValidation.objects.filter(judge_endpoint_id=judge_endpoint_id, status=JudgeValidation.Status.RECORDED)
        .select_related("project", "rubric")
        .order_by("-recorded_at", "-id")
        .first()
    )
    if found is None:
        return None
    pairs = judge_consensus_pairs(found.project, found.rubric, found)
    return JudgeErrorSDs(
        validation_id=found.pk,
        project_id=found.project_id,
        judge_name=found.judge_name,
        rubric_label=found.rubric.label,
        recorded_at=found.recorded_at.date().isoformat() if found.recorded_at else "",
        sds={metric: _error_sd(found_pairs) for metric, found_pairs in pairs.items()},
        n_pairs={metric: len(found_pairs) for metric, found_pairs in pairs.items()},
    )


def _error_sd(pairs: list[tuple[float, float]]) -> float | None:
    if len(pairs) < 2:
        return None
    return error_sd([judge for judge, _ in pairs], [human for _, human in pairs])
