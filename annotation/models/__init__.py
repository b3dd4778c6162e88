"""Tables of annotation, split by concern: projects (questions, items, stages), training (guidelines,
examples, gold, enrolments) and labels (assignments, labels, threads, adjudications, conflicts)."""

from .labels import Adjudication, Assignment, Comment, CrossStageConflict, Label, Phase, Thread
from .projects import NOT_APPLICABLE, AnnotationProject, Item, LabelQuestion, Stage
from .training import (
    Enrollment,
    ExampleView,
    GoldLabel,
    Guideline,
    GuidelineConfirmation,
    TrainingItem,
    WorkedExample,
)

__all__ = [
    "NOT_APPLICABLE",
    "Adjudication",
    "AnnotationProject",
    "Assignment",
    "Comment",
    "CrossStageConflict",
    "Enrollment",
    "ExampleView",
    "GoldLabel",
    "Guideline",
    "GuidelineConfirmation",
    "Item",
    "Label",
    "LabelQuestion",
    "Phase",
    "Stage",
    "Thread",
    "TrainingItem",
    "WorkedExample",
]
from .main import MainItem as MainItem, StageLabelling as StageLabelling  # noqa: E402, I001
from .validation import JudgeScore, JudgeValidation, RubricVersion, RubricWorkshop  # noqa: E402, F401
from .revisions import HeldRevision, LabelRevision  # noqa: E402, F401
from .crowd import CrowdApprovedParticipant, CrowdLink, CrowdRecruit, CrowdVisit  # noqa: E402, F401
