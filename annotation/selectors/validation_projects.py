"""Reads of judge-validation projects as their page and API list them: the projects, judges, workshops, an item.

The report itself (`selectors.judge_validation.validation_report`) is the other module's; these are the lists around
it, one home for what the page and the API both show."""

from __future__ import annotations

from annotation.models import AnnotationProject, Item, JudgeValidation, RubricVersion
from annotation.selectors.judge_validation import sampled_items


def validation_projects():
    """Every judge-validation project, the newest first."""
    return AnnotationProject.objects.filter(kind=AnnotationProject.Kind.JUDGE_VALIDATION).order_by("-id")


def sampled_item_count(project: AnnotationProject) -> int:
    """How many turns the project's sample drew."""
    return sampled_items(project).count()


def project_judges(project: AnnotationProject, rubric: RubricVersion | None = None) -> list[JudgeValidation]:
    """The project's judges in the order they were added (only those under ``rubric`` when one is given)."""
    judges = project.judge_validations.order_by("id")
    return list(judges if rubric is None else judges.filter(rubric=rubric))


def rubric_workshops_of(project: AnnotationProject):
    """The project's rubric workshops with the rubric versions they compare and their relabelling stage."""
    return project.rubric_workshops.select_related("from_rubric", "to_rubric", "relabel_stage")


def item_gold_values(item: Item) -> dict[str, str]:
    """Question key → the item's gold (consensus) value."""
    return dict(item.gold_labels.values_list("question__key", "value"))


def item_judge_scores(project: AnnotationProject, item: Item) -> list[tuple[JudgeValidation, list]]:
    """Each judge of the project with its scores of ``item``."""
    return [(judge, list(judge.scores.filter(item=item))) for judge in project_judges(project)]
