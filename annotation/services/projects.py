"""Writes for projects: creation, presets, label questions, stages and gold labels.

A preset sets up SafeTutors' three stages in one click."""

from __future__ import annotations

from django.db import transaction
from django.db.models import Max

from annotation import presets
from annotation.models import AnnotationProject, GoldLabel, Item, LabelQuestion, Stage, WorkedExample
from annotation.services.labelling import stage_item_rule_set
from annotation.services.training import SetupError, guideline_publish
from annotation.workflow.choice_keys import choices_with_keys


@transaction.atomic
def project_create(
    *,
    name: str,
    description: str = "",
    kind: str = AnnotationProject.Kind.GENERIC,
    categories: list[str] | None = None,
    subjects: list[str] | None = None,
    source_audit_id: int | None = None,
    preset: str = "",
    by=None,
) -> AnnotationProject:
    project = AnnotationProject.objects.create(
        name=name,
        description=description,
        kind=kind,
        categories=list(categories or []),
        subjects=list(subjects or []),
        source_audit_id=source_audit_id,
        created_by=by,
    )
    if preset:
        project_apply_preset(project=project, preset=preset, by=by)
    return project


def question_choices_clean(choices, *, question: LabelQuestion | None = None) -> list[dict]:
    """A question's choices as stored, on every write (create, the API's update, the admin): at least one, each with
    a value of its own, keys derived from the values; on a stored question, no value its gold labels or worked
    examples hold may go."""
    if not isinstance(choices, list) or not choices:
        raise SetupError("A question needs at least one choice.", field="choices")
    seen_values = set()
    cleaned = []
    for index, choice in enumerate(choices, start=1):
        value = str(choice.get("value", "")).strip() if isinstance(choice, dict) else ""
        if not value:
            raise SetupError(f"Choice {index} has no value.", field="choices")
        if value in seen_values:
            raise SetupError(f"Choice {index} repeats a value.", field="choices")
        seen_values.add(value)
        cleaned.append({"value": value, "label": str(choice.get("label") or value)})
    if question is not None and question.pk is not None:
        used = set(GoldLabel.objects.filter(question=question).values_list("value", flat=True))
        used |= set(WorkedExample.objects.filter(question=question).values_list("value", flat=True))
        gone = sorted(used - seen_values)
        if gone:
            raise SetupError(
                f"Gold labels or worked examples hold {', '.join(map(repr, gone))}; keep the choice or change them "
                "first.",
                field="choices",
            )
    # The keyboard key is derived from the values (the digit typed is the value shown); a given key is ignored.
    return choices_with_keys(cleaned)


def question_create(
    *,
    project: AnnotationProject,
    key: str,
    prompt: str,
    choices: list[dict],
    level: str = LabelQuestion.Level.NOMINAL,
    allow_unsure: bool = False,
    allow_not_applicable: bool = False,
    justification_required_for: list[str] | None = None,
    positive_values: list[str] | None = None,
    help_text: str = "",
    about_turn: str = "",
) -> LabelQuestion:
    cleaned = question_choices_clean(choices)
    position = (project.questions.aggregate(p=Max("position"))["p"] or 0) + 1
    return LabelQuestion.objects.create(
        project=project,
        key=key,
        prompt=prompt,
        help_text=help_text,
        level=level,
        choices=cleaned,
        allow_unsure=allow_unsure,
        allow_not_applicable=allow_not_applicable,
        justification_required_for=list(justification_required_for or []),
        positive_values=list(positive_values or []),
        about_turn=about_turn,
        position=position,
    )


def stage_create(*, project: AnnotationProject, name: str, questions: list[LabelQuestion], **fields) -> Stage:
    order = fields.pop("order", None) or (project.stages.aggregate(o=Max("order"))["o"] or 0) + 1
    stage = Stage.objects.create(project=project, name=name, order=order, **fields)
    stage.questions.set(questions)
    return stage


@transaction.atomic
def project_apply_preset(*, project: AnnotationProject, preset: str = presets.SAFETUTORS, by=None) -> list[Stage]:
    """Build the preset's questions, stages (with their gate defaults) and a first guideline per stage."""
    if preset != presets.SAFETUTORS:
        raise SetupError(f"Unknown preset {preset!r}; known: {', '.join(presets.PRESETS)}.")
    if project.stages.exists():
        raise SetupError("This project already has stages; a preset builds them only on an empty project.")
    project.categories = project.categories or list(presets.SAFETUTORS_RISK_CATEGORIES)
    project.subjects = project.subjects or list(presets.SAFETUTORS_SUBJECTS)
    project.preset = preset
    project.save(update_fields=["categories", "subjects", "preset"])
    questions = {}
    for spec in presets.SAFETUTORS_QUESTIONS:
        questions[spec["key"]] = LabelQuestion.objects.filter(project=project, key=spec["key"]).first() or (
            question_create(project=project, **spec)
        )
    stages = []
    for spec in presets.SAFETUTORS_STAGES:
        fields = {k: v for k, v in spec.items() if k not in ("questions", "name")}
        stage = stage_create(
            project=project,
            name=spec["name"],
            questions=[questions[key] for key in spec["questions"]],
            **fields,
            **presets.SAFETUTORS_GATE,
        )
        guideline_publish(
            stage=stage,
            text=presets.preset_guideline_text(spec, project.categories),
            change_note="First version, from the SafeTutors preset.",
            by=by,
        )
        stages.append(stage)
    by_order = {stage.order: stage for stage in stages}
    for order, (source_order, values) in presets.SAFETUTORS_ITEM_FLOW.items():
        stage_item_rule_set(
            stage=by_order[order], rule="settled", source_stage=by_order[source_order], source_values=list(values)
        )
    return stages


def gold_label_check(*, item: Item, question: LabelQuestion, value: str) -> None:
    """The rules of a gold label, on every write (import, the API's create and update, the admin)."""
    if item.project_id != question.project_id:
        raise SetupError("The item and the question belong to different projects.", field="question")
    if value not in question.values:
        raise SetupError(f"{value!r} is not one of the choices of {question.key}.", field="value")


@transaction.atomic
def gold_label_set(*, item: Item, question: LabelQuestion, value: str, rationale: str = "") -> GoldLabel:
    gold_label_check(item=item, question=question, value=value)
    gold, _ = GoldLabel.objects.update_or_create(
        item=item, question=question, defaults={"value": value, "rationale": rationale}
    )
    return gold
