"""Builders for main-labelling tests: a project with one stage, main items, and annotators who passed
the gate. The gate is set directly on the enrolment (its own tests walk the real training steps); the
guideline is confirmed through the service, because main labelling needs the current version confirmed."""

from __future__ import annotations

from types import SimpleNamespace

from annotation.models import Enrollment, Item
from annotation.services.enrollment import enrollment_create
from annotation.services.projects import project_create, question_create, stage_create
from annotation.services.training import guideline_confirm, guideline_publish
from annotation.workflow.answers import Answer

YES_NO = [{"value": "yes", "label": "Yes", "key": "1"}, {"value": "no", "label": "No", "key": "2"}]


def build_main_stage(
    *,
    items: int = 6,
    overlap: int = 3,
    policy: str = "majority_reviewer",
    questions: int = 1,
    unsure: bool = False,
    subjects: tuple[str, ...] = ("maths", "physics"),
    multi_turn_every: int = 0,
    order: int | None = None,
    project=None,
    pay_rate: str = "10.00",
    positive: tuple[str, ...] = ("yes",),
    name: str = "Main test",
) -> SimpleNamespace:
    project = project or project_create(name=name, categories=["A", "B"], subjects=list(subjects))
    made_questions = []
    for n in range(questions):
        key = f"q{n + 1}" if order is None else f"s{order}q{n + 1}"
        made_questions.append(
            question_create(
                project=project,
                key=key,
                prompt=f"Question {key}?",
                choices=YES_NO,
                allow_unsure=unsure,
                justification_required_for=["no"],
                positive_values=list(positive),
            )
        )
    fields = {"order": order} if order else {}
    stage = stage_create(
        project=project,
        name=f"Stage {order or 1}",
        questions=made_questions,
        overlap=overlap,
        resolution_policy=policy,
        unsure_enabled=unsure,
        pay_rate_per_hour=pay_rate,
        **fields,
    )
    guideline_publish(stage=stage, text="# Guideline\n\nLabel carefully.")
    made_items = list(project.items.order_by("id"))
    for n in range(len(made_items), items):
        made_items.append(
            Item.objects.create(
                project=project,
                external_id=f"item-{n}",
                payload={"text": f"Main item {n}"},
                subject=subjects[n % len(subjects)],
                category="A" if n % 2 == 0 else "B",
                modality="multi" if multi_turn_every and n % multi_turn_every == 0 else "single",
            )
        )
    return SimpleNamespace(project=project, stage=stage, questions=made_questions, items=made_items)


def pass_gate(stage, user) -> Enrollment:
    """Enrol the user (in the project's first subject) and mark them as having passed the gate, with the current
    guideline confirmed."""
    enrollment = enrollment_create(stage=stage, user=user, subject=(stage.project.subjects or [""])[0])
    guideline_confirm(enrollment=enrollment)
    Enrollment.objects.filter(pk=enrollment.pk).update(gate_passed=True, status=Enrollment.Status.PASSED)
    enrollment.refresh_from_db()
    return enrollment


def answers(s, value: str, *, unsure: bool = False) -> dict[str, Answer]:
    """The same answer to every question of the stage (a justification where "no" needs one)."""
    if unsure:
        return {q.key: Answer(unsure=True) for q in s.questions}
    return {
        q.key: Answer(value=value, justification="it is not, because …" if value == "no" else "") for q in s.questions
    }
