"""Export of a project as Label Studio JSON tasks, with its label config.

The tasks are ready for ``POST /api/projects/{id}/import`` as they are: one task per item (the layout the config reads,
plus EduFair's own payload and ids), one annotation per (annotator, stage, phase, round) with ``completed_by`` as the
annotator's pseudonymous e-mail (the anonymous export leaves it out and names the annotator in the provenance by a
per-project pseudonym, ``annotator=anon-…``, which the import reads back), each adjudicated final as a
``ground_truth`` annotation, and each item's gold labels as another. Every annotation says what it is in its
provenance region."""

from __future__ import annotations

import json

from annotation.models import NOT_APPLICABLE, Adjudication, AnnotationProject, GoldLabel, Item, Label, LabelQuestion

from .config import UNSURE, ChoiceQuestion, ConfigNames, config_names, label_config, layout_for, task_data
from .provenance import provenance_text
from .pseudonyms import anonymous_annotator, deployment_annotator_email

TASKS, TASKS_ANONYMOUS, CONFIG = "labelstudio", "labelstudio-anonymous", "labelstudio-config"
FORMATS = (TASKS, TASKS_ANONYMOUS, CONFIG)


def choice_question(question: LabelQuestion) -> ChoiceQuestion:
    choices = [(str(c["value"]), str(c.get("label") or c["value"])) for c in question.choices]
    if question.allow_not_applicable:
        choices.append((NOT_APPLICABLE, "Not applicable"))
    return ChoiceQuestion(
        key=question.key, prompt=question.prompt, choices=tuple(choices), unsure=question.allow_unsure
    )


def project_layout(project: AnnotationProject) -> str:
    return layout_for(Item.objects.filter(project=project).values_list("payload", flat=True).iterator())


def project_label_config(project: AnnotationProject) -> str:
    questions = [choice_question(q) for q in project.questions.order_by("position", "id")]
    return label_config(questions, project_layout(project))


def _choice(names: ConfigNames, key: str, value: str) -> dict:
    return {"from_name": key, "to_name": names.item, "type": "choices", "value": {"choices": [value]}}


def _text(names: ConfigNames, name: str, text: str) -> dict:
    return {"from_name": name, "to_name": names.item, "type": "textarea", "value": {"text": [text]}}


def _annotation(
    names: ConfigNames, number: int, *, provenance: dict, ground_truth: bool, email: str | None, lead_time=None
) -> dict:
    annotation = {
        "id": number,
        "ground_truth": ground_truth,  # Label Studio's import takes a missing flag as True
        "was_cancelled": False,
        "lead_time": lead_time,
        "result": [_text(names, names.provenance, provenance_text(provenance))],
    }
    if provenance.get("labelled_at"):
        annotation["created_at"] = provenance["labelled_at"]
    if email:
        annotation["completed_by"] = {"email": email}  # the form Label Studio resolves by e-mail
    return annotation


def label_studio_tasks(project: AnnotationProject, *, attribution: bool = True) -> list[dict]:
    """Every item of the project as a task, with its labels, adjudicated finals and gold as annotations."""
    layout = project_layout(project)
    names = config_names(project.questions.order_by("position", "id").values_list("key", flat=True))
    tasks: dict[int, dict] = {}
    for item in Item.objects.filter(project=project).order_by("id"):
        tasks[item.id] = {
            "id": item.id,
            "data": {
                **task_data(item.payload, layout),
                "external_id": item.external_id,
                "subject": item.subject,
                "category": item.category,
                "modality": item.modality,
                "payload": item.payload,
            },
            "annotations": [],
        }
    emails: dict[int, str] = {}

    def email_of(user_id: int | None) -> str | None:
        if not attribution or user_id is None:
            return None
        if user_id not in emails:
            emails[user_id] = deployment_annotator_email(user_id)
        return emails[user_id]

    grouped: dict[tuple, dict] = {}
    labels = (
        Label.objects.filter(assignment__stage__project=project, assignment__submitted_at__isnull=False)
        .select_related("assignment__stage", "question")
        .order_by("assignment__stage__order", "assignment__item_id", "assignment_id", "round", "question__position")
    )
    for label in labels.iterator(chunk_size=2000):
        assignment = label.assignment
        key = (assignment.id, label.round)
        annotation = grouped.get(key)
        if annotation is None:
            provenance = {
                "kind": "label",
                "stage": assignment.stage.order,
                "phase": label.phase,
                "round": label.round,
                "annotator": "" if attribution else anonymous_annotator(project.id, assignment.annotator_id),
                "labelled_at": label.created_at.isoformat(),
            }
            annotation = _annotation(
                names,
                len(grouped) + 1,
                provenance=provenance,
                ground_truth=False,
                email=email_of(assignment.annotator_id),
                lead_time=label.seconds,
            )
            grouped[key] = annotation
            tasks[assignment.item_id]["annotations"].append(annotation)
        annotation["result"].append(_choice(names, label.question.key, UNSURE if label.unsure else label.value))
        if label.justification:
            annotation["result"].append(_text(names, names.justifications[label.question.key], label.justification))

    finals = (
        Adjudication.objects.filter(stage__project=project)
        .exclude(final_value="")
        .select_related("stage", "question")
        .order_by("stage__order", "item_id", "method", "question__position")
    )
    for final in finals:
        key = ("adjudication", final.stage_id, final.item_id, final.method)
        annotation = grouped.get(key)
        if annotation is None:
            provenance = {"kind": "adjudication", "stage": final.stage.order, "method": final.method}
            annotation = _annotation(
                names, len(grouped) + 1, provenance=provenance, ground_truth=True, email=email_of(final.decided_by_id)
            )
            grouped[key] = annotation
            tasks[final.item_id]["annotations"].append(annotation)
        annotation["result"].append(_choice(names, final.question.key, final.final_value))

    for gold in (
        GoldLabel.objects.filter(item__project=project)
        .select_related("question")
        .order_by("item_id", "question__position")
    ):
        key = ("gold", gold.item_id)
        annotation = grouped.get(key)
        if annotation is None:
            annotation = _annotation(
                names, len(grouped) + 1, provenance={"kind": "gold"}, ground_truth=True, email=None
            )
            grouped[key] = annotation
            tasks[gold.item_id]["annotations"].append(annotation)
        annotation["result"].append(_choice(names, gold.question.key, gold.value))
    return list(tasks.values())


def label_studio_export(project: AnnotationProject, fmt: str) -> tuple[str, str, str]:
    """(body, content type, file name): the tasks (with or without attribution) or the label config."""
    stem = f"annotation-{project.id}-label-studio"
    if fmt == CONFIG:
        return project_label_config(project), "application/xml; charset=utf-8", f"{stem}-config.xml"
    if fmt in (TASKS, TASKS_ANONYMOUS):
        tasks = label_studio_tasks(project, attribution=fmt == TASKS)
        suffix = "" if fmt == TASKS else "-anonymous"
        return json.dumps(tasks, ensure_ascii=False, indent=1), "application/json", f"{stem}{suffix}.json"
    raise ValueError(f"format is one of {', '.join(FORMATS)}")
