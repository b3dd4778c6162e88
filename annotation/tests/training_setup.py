"""Small builders for training tests: a stage with one yes/no question, gold items for the pilot and the
qualification test, worked examples and a guideline; and helpers that answer through the services."""

from __future__ import annotations

from types import SimpleNamespace

from annotation.models import Item, TrainingItem
from annotation.services.enrollment import enrollment_create
from annotation.services.labels import any_phase_label_submit
from annotation.services.projects import gold_label_set, project_create, question_create, stage_create
from annotation.services.training import (
    example_mark_seen,
    guideline_confirm,
    guideline_publish,
    norming_acknowledge,
    worked_example_add,
)
from annotation.workflow.answers import Answer

GOLD_RATIONALE = "GOLD-RATIONALE-{n}: the reason this item is {value}"
UNSURE = "unsure"


def build_stage(
    *,
    pilot: int = 5,
    qualification: int = 10,
    examples: int = 2,
    main: int = 3,
    unsure: bool = False,
    unsure_rule: str = "strict",
    min_coverage: float = 0.5,
    pilot_threshold: float = 0.8,
    min_correct: int = 8,
) -> SimpleNamespace:
    project = project_create(name="Training test", categories=["A", "B"], subjects=["maths"])
    question = question_create(
        project=project,
        key="valid",
        prompt="Is the question valid?",
        choices=[{"value": "yes", "label": "Valid", "key": "1"}, {"value": "no", "label": "Not valid", "key": "2"}],
        allow_unsure=unsure,
        justification_required_for=["no"],
        positive_values=["yes"],
    )
    stage = stage_create(
        project=project,
        name="Domain validity",
        questions=[question],
        pilot_size=pilot,
        pilot_threshold=pilot_threshold,
        qualification_size=qualification,
        qualification_min_correct=min_correct,
        unsure_enabled=unsure,
        unsure_rule=unsure_rule,
        unsure_min_coverage=min_coverage,
    )
    guideline_publish(stage=stage, text="# Guideline\n\nJudge whether the question is valid.")
    gold: dict[int, str] = {}

    def make_items(prefix: str, count: int, with_gold: bool) -> list[Item]:
        made = []
        for n in range(count):
            item = Item.objects.create(
                project=project,
                external_id=f"{prefix}-{n}",
                payload={"text": f"{prefix} question {n}"},
                subject="maths",
                category="A" if n % 2 == 0 else "B",
            )
            if with_gold:
                value = "yes" if n % 2 == 0 else "no"
                gold_label_set(
                    item=item,
                    question=question,
                    value=value,
                    rationale=GOLD_RATIONALE.format(n=f"{prefix}{n}", value=value),
                )
                gold[item.id] = value
            made.append(item)
        return made

    example_items = make_items("example", examples, with_gold=False)
    pilot_items = make_items("pilot", pilot, with_gold=True)
    qualification_items = make_items("qual", qualification, with_gold=True)
    main_items = make_items("main", main, with_gold=False)
    for position, item in enumerate(pilot_items):
        TrainingItem.objects.create(stage=stage, item=item, phase=TrainingItem.Phase.PILOT, position=position)
    for position, item in enumerate(qualification_items):
        TrainingItem.objects.create(stage=stage, item=item, phase=TrainingItem.Phase.QUALIFICATION, position=position)
    for n, item in enumerate(example_items):
        worked_example_add(
            stage=stage,
            item=item,
            question=question,
            kind="clear_positive" if n % 2 == 0 else "clear_negative",
            value="yes" if n % 2 == 0 else "no",
            rationale=f"Example rationale {n}",
        )
    return SimpleNamespace(
        project=project,
        stage=stage,
        question=question,
        pilot_items=pilot_items,
        qualification_items=qualification_items,
        example_items=example_items,
        main_items=main_items,
        gold=gold,
    )


def answer(value: str) -> dict[str, Answer]:
    if value == UNSURE:
        return {"valid": Answer(unsure=True)}
    return {"valid": Answer(value=value, justification="because it is not" if value == "no" else "")}


def flip(value: str) -> str:
    return "no" if value == "yes" else "yes"


def answers_with(gold_values: list[str], wrong: int = 0, unsure: int = 0) -> list[str]:
    """Gold values with the first `wrong` answers flipped and the next `unsure` answered Unsure."""
    out = []
    for n, value in enumerate(gold_values):
        if n < wrong:
            out.append(flip(value))
        elif n < wrong + unsure:
            out.append(UNSURE)
        else:
            out.append(value)
    return out


def enrol(s, user, subject: str = "maths"):
    return enrollment_create(stage=s.stage, user=user, subject=subject)


def through_examples(s, enrollment) -> None:
    guideline_confirm(enrollment=enrollment)
    for example in s.stage.worked_examples.all():
        example_mark_seen(enrollment=enrollment, example=example)


def label_all(s, user, items, values, phase) -> None:
    for item, value in zip(items, values, strict=True):
        any_phase_label_submit(
            annotator=user, stage=s.stage, item=item, phase=phase, answers=answer(value), seconds=12.5
        )


def walk_to_decision(s, user, pilot_values=None, qualification_values=None):
    """Enrol and take a user through every step with the given answers (default: all gold)."""
    enrollment = enrol(s, user)
    through_examples(s, enrollment)
    label_all(s, user, s.pilot_items, pilot_values or [s.gold[i.id] for i in s.pilot_items], "pilot")
    norming_acknowledge(enrollment=enrollment)
    label_all(
        s,
        user,
        s.qualification_items,
        qualification_values or [s.gold[i.id] for i in s.qualification_items],
        "qualification",
    )
    enrollment.refresh_from_db()
    return enrollment
