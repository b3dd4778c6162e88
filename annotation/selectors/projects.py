"""Reads for projects: lists, a project's items and counts, a stage's page, each stage's enrolments, the pass rates.

The pass-rate table counts recruited, passed, failed and replaced, with the pass rate
(SafeTutors' "24 of 33 (72.7%)")."""

from __future__ import annotations

from django.db.models import Count, Q

from annotation.models import (
    AnnotationProject,
    Enrollment,
    GoldLabel,
    Guideline,
    Item,
    LabelQuestion,
    MainItem,
    Stage,
    TrainingItem,
    WorkedExample,
)
from annotation.selectors.training import training_progress
from annotation.workflow.training import STEP_TITLES, next_step


def projects_list():
    return AnnotationProject.objects.annotate(
        item_count=Count("items", distinct=True), stage_count=Count("stages", distinct=True)
    ).order_by("-created_at", "-id")


def stages_of(project: AnnotationProject):
    return (
        project.stages.prefetch_related("questions")
        .annotate(
            pilot_count=Count(
                "training_items", filter=Q(training_items__phase=TrainingItem.Phase.PILOT), distinct=True
            ),
            qualification_count=Count(
                "training_items", filter=Q(training_items__phase=TrainingItem.Phase.QUALIFICATION), distinct=True
            ),
            example_count=Count("worked_examples", distinct=True),
        )
        .order_by("order")
    )


def pass_rate_text(passed: int, decided: int) -> str:
    if decided == 0:
        return "no decisions yet"
    return f"{passed} of {decided} ({passed / decided:.1%})"


def pass_rate_table(project: AnnotationProject) -> list[dict]:
    """Per stage: recruited, passed, failed, replaced, still in training, and the pass rate over the
    recruits whose outcome is known (every recruit once training is over, as the paper reports it)."""
    rows = []
    counts = (
        Enrollment.objects.filter(stage__project=project)
        .values("stage_id")
        .annotate(
            recruited=Count("id"),
            passed=Count("id", filter=Q(gate_passed=True)),
            failed=Count("id", filter=Q(gate_passed=False)),
            replaced=Count("id", filter=Q(status=Enrollment.Status.REPLACED)),
            in_training=Count("id", filter=Q(gate_passed__isnull=True) & ~Q(status=Enrollment.Status.REPLACED)),
        )
    )
    by_stage = {row["stage_id"]: row for row in counts}
    for stage in project.stages.order_by("order"):
        row = by_stage.get(stage.id, {"recruited": 0, "passed": 0, "failed": 0, "replaced": 0, "in_training": 0})
        decided = row["recruited"] - row["in_training"]
        rows.append(
            {
                "stage_id": stage.id,
                "stage_order": stage.order,
                "stage": stage.name,
                "recruited": row["recruited"],
                "passed": row["passed"],
                "failed": row["failed"],
                "replaced": row["replaced"],
                "in_training": row["in_training"],
                "pass_rate": row["passed"] / decided if decided else None,
                "pass_rate_text": pass_rate_text(row["passed"], decided),
            }
        )
    return rows


def stage_enrollments(stage: Stage) -> list[dict]:
    """Every enrolment of a stage with its current step and stored scores (for researchers)."""
    rows = []
    for enrollment in stage.enrollments.select_related("user", "replaced_by__user", "stage").order_by("enrolled_at"):
        progress = training_progress(enrollment)
        step = next_step(progress)
        rows.append(
            {
                "enrollment": enrollment,
                "step": step.value,
                "step_title": STEP_TITLES[step],
                "progress": progress,
            }
        )
    return rows


def project_by_id(project_id: int) -> AnnotationProject | None:
    return AnnotationProject.objects.filter(pk=project_id).first()


def project_item(project_id: int, item_id: int | None) -> Item | None:
    """The project's item ``item_id`` (None when the id names no item of this project)."""
    return Item.objects.filter(pk=item_id, project_id=project_id).first()


def project_item_by_external_id(project: AnnotationProject, external_id: str) -> Item | None:
    return Item.objects.filter(project=project, external_id=external_id).first()


def item_ids_by_external_id(project: AnnotationProject, external_ids) -> dict[str, int]:
    """External id → item id, for those of ``external_ids`` that name an item of the project."""
    return dict(Item.objects.filter(project=project, external_id__in=external_ids).values_list("external_id", "pk"))


def external_ids_of(item_ids) -> dict[int, str]:
    """Item id → its external id."""
    return dict(Item.objects.filter(pk__in=item_ids).values_list("pk", "external_id"))


def project_questions(project: AnnotationProject):
    return project.questions.all()


def project_item_count(project: AnnotationProject) -> int:
    return Item.objects.filter(project=project).count()


def gold_item_count(project: AnnotationProject) -> int:
    """The project's items with at least one gold label."""
    return Item.objects.filter(project=project, gold_labels__isnull=False).distinct().count()


def main_item_count(stage: Stage) -> int:
    """The stage's main items so far."""
    return MainItem.objects.filter(stage=stage).count()


def stages_in_order(project: AnnotationProject) -> list[Stage]:
    return list(project.stages.order_by("order"))


def enrolment_stages():
    """Every stage with its project, by project name and stage order (where a person can be enrolled)."""
    return Stage.objects.select_related("project").order_by("project__name", "order")


def stage_recruits(stage: Stage):
    """The stage's enrolments with their users and replacements, in enrolment order."""
    return Enrollment.objects.filter(stage=stage).select_related("user", "replaced_by__user")


def stage_page_reads(stage: Stage) -> dict:
    """What the stage's page lists: questions, guideline versions, worked examples, training items, pinned comments."""
    return {
        "questions": stage.questions.all(),
        "guidelines": stage.guidelines.all(),
        "examples": stage.worked_examples.select_related("item", "question"),
        "pilot_items": stage.training_items.filter(phase=TrainingItem.Phase.PILOT).select_related("item"),
        "qualification_items": stage.training_items.filter(phase=TrainingItem.Phase.QUALIFICATION).select_related(
            "item"
        ),
        "pins": [
            comment
            for thread in stage.threads.prefetch_related("comments")
            for comment in thread.comments.all()
            if comment.pinned and not comment.included_in_guideline_id
        ],
    }


# --- The rows behind the API's project collections (each narrowed by `narrowed`) -------------------------------------


def narrowed(rows, lookups: dict[str, int]):
    """``rows`` whose every lookup (e.g. ``project_id``) equals its id: a collection's ``?project=``, ``?stage=``."""
    return rows.filter(**lookups) if lookups else rows


def question_rows():
    return LabelQuestion.objects.all()


def item_rows():
    return Item.objects.all()


def gold_label_rows():
    return GoldLabel.objects.select_related("question")


def stage_rows():
    return Stage.objects.prefetch_related("questions")


def guideline_rows():
    return Guideline.objects.all()


def worked_example_rows():
    return WorkedExample.objects.all()


def enrollment_rows(*, user=None, stage_id: int | None = None):
    """Enrolments with their users by stage (only ``user``'s when given; only the stage's when ``stage_id`` is)."""
    rows = Enrollment.objects.select_related("user").order_by("stage_id", "id")
    if user is not None:
        rows = rows.filter(user=user)
    return rows if stage_id is None else rows.filter(stage_id=stage_id)
