"""Exports of every label of a project with its provenance — annotator pseudonym, stage, phase, round,
time, justification — as CSV or JSONL, and in Label Studio's JSON export format (a list of tasks with
their annotations), so a project can move between the two tools.

CSV cells that a spreadsheet would read as a formula (starting with = + - @, or a tab or carriage return)
are prefixed with an apostrophe (OWASP's advice against CSV injection); JSON is left exact.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator

from annotation.models import Adjudication, AnnotationProject, Item, Label
from annotation.selectors.agreement_report import annotator_pseudonyms

FORMATS = ("csv", "jsonl", "labelstudio")
FIELDS = (
    "project",
    "item_id",
    "external_id",
    "subject",
    "category",
    "modality",
    "stage",
    "stage_name",
    "phase",
    "round",
    "question",
    "value",
    "unsure",
    "justification",
    "seconds",
    "annotator",
    "labelled_at",
    "final_value",
    "final_method",
    "conflict",
)
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def neutralise_cell(value) -> str:
    """A cell that cannot run as a spreadsheet formula."""
    text = "" if value is None else str(value)
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def label_records(project: AnnotationProject) -> Iterator[dict]:
    """One record per label, in a stable order; real names never leave, pseudonyms do."""
    pseudonyms = annotator_pseudonyms(project)
    finals = {
        (a.stage_id, a.item_id, a.question_id): a
        for a in Adjudication.objects.filter(stage__project=project).only(
            "stage_id", "item_id", "question_id", "final_value", "method"
        )
    }
    dispositions = {c.item_id: c.disposition for c in project.conflicts.only("item_id", "disposition")}
    labels = (
        Label.objects.filter(assignment__stage__project=project, assignment__submitted_at__isnull=False)
        .select_related("assignment__item", "assignment__stage", "question")
        .order_by("assignment__stage__order", "assignment__item_id", "question__position", "assignment_id", "round")
    )
    for label in labels.iterator(chunk_size=2000):
        assignment = label.assignment
        item = assignment.item
        final = finals.get((assignment.stage_id, item.id, label.question_id))
        yield {
            "project": project.id,
            "item_id": item.id,
            "external_id": item.external_id,
            "subject": item.subject,
            "category": item.category,
            "modality": item.modality,
            "stage": assignment.stage.order,
            "stage_name": assignment.stage.name,
            "phase": label.phase,
            "round": label.round,
            "question": label.question.key,
            "value": None if label.unsure else label.value,
            "unsure": label.unsure,
            "justification": label.justification,
            "seconds": label.seconds,
            "annotator": pseudonyms.get(assignment.annotator_id, f"U{assignment.annotator_id}"),
            "labelled_at": label.created_at.isoformat(),
            "final_value": final.final_value if final else None,
            "final_method": final.method if final else None,
            "conflict": dispositions.get(item.id),
        }


def labels_csv(project: AnnotationProject) -> str:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(FIELDS)
    for record in label_records(project):
        writer.writerow([neutralise_cell(record[field]) for field in FIELDS])
    return out.getvalue()


def labels_jsonl(project: AnnotationProject) -> str:
    return "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in label_records(project))


def label_studio_tasks(project: AnnotationProject) -> list[dict]:
    """Label Studio's export format: one task per item with ``data`` (the payload), and one annotation
    per (annotator, stage, phase, round) whose ``result`` holds a "choices" region per question (and a
    "textarea" region for a justification). ``completed_by`` is the pseudonym; our provenance sits in
    each annotation's ``meta``."""
    items = {item.id: item for item in Item.objects.filter(project=project)}
    tasks: dict[int, dict] = {}
    annotations: dict[tuple, dict] = {}
    for record in label_records(project):
        item = items[record["item_id"]]
        task = tasks.setdefault(
            item.id,
            {
                "id": item.id,
                "data": {**item.payload, "external_id": item.external_id, "subject": item.subject},
                "meta": {"category": item.category, "modality": item.modality},
                "annotations": [],
            },
        )
        key = (item.id, record["annotator"], record["stage"], record["phase"], record["round"])
        annotation = annotations.get(key)
        if annotation is None:
            annotation = {
                "id": len(annotations) + 1,
                "completed_by": record["annotator"],
                "created_at": record["labelled_at"],
                "lead_time": record["seconds"],
                "was_cancelled": False,
                "ground_truth": False,
                "result": [],
                "meta": {"stage": record["stage"], "phase": record["phase"], "round": record["round"]},
            }
            annotations[key] = annotation
            task["annotations"].append(annotation)
        choice = "Unsure" if record["unsure"] else record["value"]
        annotation["result"].append(
            {
                "from_name": record["question"],
                "to_name": "item",
                "type": "choices",
                "value": {"choices": [choice]},
            }
        )
        if record["justification"]:
            annotation["result"].append(
                {
                    "from_name": f"{record['question']}_justification",
                    "to_name": "item",
                    "type": "textarea",
                    "value": {"text": [record["justification"]]},
                }
            )
    return list(tasks.values())


def export_labels(project: AnnotationProject, fmt: str) -> tuple[str, str, str]:
    """(body, content type, file name) of the labels export in ``fmt``."""
    stem = f"annotation-{project.id}-labels"
    if fmt == "csv":
        return labels_csv(project), "text/csv; charset=utf-8", f"{stem}.csv"
    if fmt == "jsonl":
        return labels_jsonl(project), "application/x-ndjson", f"{stem}.jsonl"
    if fmt == "labelstudio":
        return (
            json.dumps(label_studio_tasks(project), ensure_ascii=False, indent=1),
            "application/json",
            f"{stem}-label-studio.json",
        )
    raise ValueError(f"format is one of {', '.join(FORMATS)}")
