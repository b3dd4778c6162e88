"""The judge's validation status of an audit, as the annotation app recorded it: the audits app's one door
into the annotation app (no other module of the app imports `annotation`).

A validation is recorded by the judge-validation workflow (a project of human labels on the audit's tutor
turns, compared with the judge); results pages, exports and reports read here whether the audit's judge
(endpoint + rubric version) has one and which metrics it failed.
"""

from __future__ import annotations

from annotation.selectors.judge_validation import JudgeValidationStatus, judge_validation_status
from audits.models import Audit

__all__ = ["JudgeValidationStatus", "audit_judge_validation"]


def audit_judge_validation(audit: Audit) -> JudgeValidationStatus:
    """The recorded validation of the audit's own judge under its own rubric version (preferring one made
    on this audit), or "not validated"."""
    return judge_validation_status(audit)
