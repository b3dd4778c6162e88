"""Reads for projects: lists, each stage's enrolments with progress and scores, and the pass-rate table.

The pass-rate table counts recruited, passed, failed and replaced, with the pass rate
(SafeTutors' "24 of 33 (72.7%)")."""

from __future__ import annotations

from django.db.models import Count, Q

from annotation.models import AnnotationProject, Enrollment, Stage, TrainingItem
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
