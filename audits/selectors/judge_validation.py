"""The audits app's one door into the annotation app: an audit's judge validation status and human subset.

Both are read as the annotation app recorded them; no other module of the app imports `annotation`.

A validation is recorded by the judge-validation workflow (a project of human labels on the audit's tutor
turns, compared with the judge); results pages, exports and reports read here whether the audit's judge
(endpoint + rubric version) has one and which metrics it failed, and judge-corrected contrasts read the human
consensus of the sampled turns with their inclusion probabilities.
"""

from __future__ import annotations

from annotation.selectors.judge_validation import (
    HumanSubset,
    JudgeValidationStatus,
    human_subset,
    judge_validation_status,
)
from audits.models import Audit

__all__ = ["HumanSubset", "JudgeValidationStatus", "audit_human_subset", "audit_judge_validation"]


def audit_judge_validation(audit: Audit) -> JudgeValidationStatus:
    """The recorded validation of the audit's own judge under its own rubric version (preferring one made
    on this audit), or "not validated"."""
    return judge_validation_status(audit)


def audit_human_subset(audit: Audit) -> HumanSubset | None:
    """The human truth on the audit's sampled tutor turns: per metric, Turn id → (settled consensus on the
    rubric's scale, inclusion probability), from the newest judge-validation project built from the audit
    under the audit's judge template; None when the audit has none."""
    return human_subset(audit)
