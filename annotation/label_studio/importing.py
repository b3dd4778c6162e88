"""Import of a Label Studio project export into an EduFair project, in one transaction.

Tasks become items (matched by ``data.external_id`` when the export came from EduFair), annotations become labels mapped
by question key, each Label Studio annotator becomes a pseudonymous annotator (``ls-`` and a hash of the e-mail or id
Label Studio named them by), and ``gold`` / ``adjudication`` annotations (from the provenance region) become gold labels
and adjudicated finals.

An annotation without provenance is a main-phase, before-discussion label of the stage given (default the
project's first); a Label Studio ground-truth star on such an annotation does not make it gold. Items made
here do not join an open main labelling: their labels are already given. Importing the same file twice
changes nothing, and so does importing a project's own labels back (recognised by their stored time in the
provenance); a label that differs from one already stored is refused, as is anything `reading` cannot map —
and then nothing is written.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from annotation.models import (
    Adjudication,
    AnnotationProject,
    Assignment,
    GoldLabel,
    Item,
    Label,
    LabelQuestion,
    Stage,
)
from edufair_web.accounts.roles import ANNOTATOR, user_set_role
from edufair_web.json_input import JSONInputError, loads_array

from .export import choice_question
from .reading import MAX_ERRORS, ReadAnnotation, ReadTask, annotator_username, read_label_studio_export

MAX_SECONDS_PER_ITEM = 4 * 3600
# Tasks matched to the project's items with one query: the items of a whole file at once took a model instance each.
MATCH_BATCH = 500


class LabelStudioImportFailed(ValueError):
    """Nothing was imported; ``errors`` says why, task by task: the first MAX_ERRORS, ``total`` counts them all."""

    def __init__(self, errors: list[str], total: int | None = None):
        self.errors = errors[:MAX_ERRORS]
        self.total = max(total if total is not None else len(errors), len(self.errors))
        more = f" (and {self.total - 10} more)" if self.total > 10 else ""
        super().__init__(f"{self.total} error(s), nothing imported: {'; '.join(self.errors[:10])}{more}")

    @property
    def more(self) -> int:
        """The errors counted but not listed."""
        return self.total - len(self.errors)


@dataclass
class LabelStudioImportReport:
    items_created: int = 0
    items_matched: int = 0
    annotators_created: int = 0
    labels_created: int = 0
    labels_unchanged: int = 0
    gold_labels: int = 0
    adjudications: int = 0
    warnings: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {
            "items_created": self.items_created,
            "items_matched": self.items_matched,
            "annotators_created": self.annotators_created,
            "labels_created": self.labels_created,
            "labels_unchanged": self.labels_unchanged,
            "gold_labels": self.gold_labels,
            "adjudications": self.adjudications,
            "warnings": self.warnings,
        }

    def describe(self) -> str:
        return (
            f"Imported from Label Studio: {self.items_created} new item(s), {self.items_matched} matched, "
            f"{self.labels_created} label(s) ({self.labels_unchanged} already there) from "
            f"{self.annotators_created} new annotator(s), {self.gold_labels} gold label(s), "
            f"{self.adjudications} adjudicated final(s)."
        )


class _CappedErrors(list):
    """The first MAX_ERRORS errors, and the count of all of them (a file of 30,000 bad tasks answered 2 MB)."""

    total = 0

    def append(self, error: str) -> None:
        self.total += 1
        if len(self) < MAX_ERRORS:
            super().append(error)


def _check(project: AnnotationProject, tasks: Iterable[ReadTask], stages: dict[int, Stage], default: Stage | None):
    errors = _CappedErrors()
    stage_keys = {order: {q.key for q in stage.questions.all()} for order, stage in stages.items()}
    for task in tasks:
        if project.categories and task.category and task.category not in project.categories:
            errors.append(f"{task.where}: category {task.category!r} is not a category of the project")
        if project.subjects and task.subject and task.subject not in project.subjects:
            errors.append(f"{task.where}: subject {task.subject!r} is not a subject of the project")
        seen: dict[tuple, str] = {}
        for annotation in task.annotations:
            if annotation.kind == "gold":
                continue
            order = annotation.stage if annotation.stage is not None else (default.order if default else None)
            if order not in stages:
                errors.append(
                    f"{annotation.where}: the project has no stage {order}"
                    if order is not None
                    else f"{annotation.where}: the project has no stage to put labels in"
                )
                continue
            missing = sorted(set(annotation.answers) - stage_keys[order])
            if missing:
                errors.append(f"{annotation.where}: stage {order} does not ask {', '.join(missing)}")
            key = (annotation.kind, annotation.identity, order, annotation.round, annotation.method)
            if key in seen:
                errors.append(f"{annotation.where}: the same annotation as {seen[key]}")
            seen[key] = annotation.where
    return errors


def _annotator(identity: str, users: dict[str, User], report: LabelStudioImportReport) -> User:
    username = annotator_username(identity)
    if username not in users:
        user, created = User.objects.get_or_create(username=username)
        if created:
            user.set_unusable_password()
            user.save(update_fields=["password"])
            user_set_role(user=user, role=ANNOTATOR)
            report.annotators_created += 1
        users[username] = user
    return users[username]


def _already_here(annotation: ReadAnnotation, item: Item, stage: Stage, errors, report) -> bool:
    """Whether the annotation is one of this project's own labels coming back (exported from here, so its
    provenance carries the labels' stored time): Label Studio names its annotator by its own id, so without
    this a round trip into the same project would add every label again under another name."""
    if annotation.labelled_at is None:
        return False
    stored = {
        label.question.key: label
        for label in Label.objects.filter(
            assignment__stage=stage,
            assignment__item=item,
            phase=annotation.phase,
            round=annotation.round,
            created_at=annotation.labelled_at,
        ).select_related("question")
    }
    if not stored:
        return False
    for key, answer in annotation.answers.items():
        label = stored.get(key)
        if label is None or (label.value, label.unsure, label.justification) != (
            answer.value,
            answer.unsure,
            answer.justification,
        ):
            errors.append(f"{annotation.where}: {key!r} differs from the label already stored for it")
        else:
            report.labels_unchanged += 1
    return True


def _labels(annotation: ReadAnnotation, item: Item, stage: Stage, user: User, questions, errors, report) -> None:
    submitted = annotation.labelled_at or timezone.now()
    assignment, _ = Assignment.objects.get_or_create(
        stage=stage, item=item, annotator=user, defaults={"phase": annotation.phase, "submitted_at": submitted}
    )
    if assignment.phase != annotation.phase:
        errors.append(
            f"{annotation.where}: this annotator's labels of the item are {assignment.phase}, not {annotation.phase}"
        )
        return
    existing = {
        label.question.key: label
        for label in Label.objects.filter(assignment=assignment, round=annotation.round).select_related("question")
    }
    made = []
    for key, answer in annotation.answers.items():
        label = existing.get(key)
        if label is not None:
            if (label.value, label.unsure, label.justification) != (answer.value, answer.unsure, answer.justification):
                errors.append(f"{annotation.where}: {key!r} differs from the label already stored for it")
            else:
                report.labels_unchanged += 1
            continue
        made.append(
            Label(
                assignment=assignment,
                question=questions[key],
                phase=annotation.phase,
                round=annotation.round,
                value=answer.value,
                unsure=answer.unsure,
                justification=answer.justification,
                seconds=min(annotation.seconds, MAX_SECONDS_PER_ITEM),
            )
        )
    created = Label.objects.bulk_create(made)
    if annotation.labelled_at and created:
        Label.objects.filter(pk__in=[label.pk for label in created]).update(created_at=annotation.labelled_at)
    if assignment.submitted_at is None:
        Assignment.objects.filter(pk=assignment.pk).update(submitted_at=submitted)
    report.labels_created += len(created)


def _finals(annotation: ReadAnnotation, item: Item, stage: Stage | None, questions, errors, report) -> None:
    for key, answer in annotation.answers.items():
        if annotation.kind == "gold":
            row, created = GoldLabel.objects.get_or_create(
                item=item, question=questions[key], defaults={"value": answer.value}
            )
            stored = row.value
            report.gold_labels += created
        else:
            row, created = Adjudication.objects.get_or_create(
                stage=stage,
                item=item,
                question=questions[key],
                defaults={
                    "final_value": answer.value,
                    "method": annotation.method,
                    "note": "Imported from Label Studio.",
                },
            )
            stored = row.final_value
            report.adjudications += created
        if not created and stored != answer.value:
            errors.append(f"{annotation.where}: the {annotation.kind} answer to {key!r} is already {stored!r}")


def _batches(tasks: Iterable[ReadTask], size: int) -> Iterator[list[ReadTask]]:
    batch: list[ReadTask] = []
    for task in tasks:
        batch.append(task)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def _write(
    project: AnnotationProject,
    tasks: Iterable[ReadTask],
    stages: dict[int, Stage],
    default: Stage | None,
    questions: dict[str, LabelQuestion],
    errors: list[str],
    report: LabelStudioImportReport,
) -> int:
    """Write every task (or stop at MAX_ERRORS errors); the number of matched items whose stored content differs."""
    users: dict[str, User] = {}
    changed = 0
    for batch in _batches(tasks, MATCH_BATCH):
        existing = {
            item.external_id: item
            for item in Item.objects.filter(project=project, external_id__in=[t.external_id for t in batch])
        }
        for task in batch:
            item = existing.get(task.external_id)
            if item is None:
                item = Item.objects.create(
                    project=project,
                    external_id=task.external_id,
                    payload=task.payload,
                    subject=task.subject,
                    category=task.category,
                    modality=task.modality,
                    metadata={"source": "label-studio", "task_id": task.task_id},
                )
                report.items_created += 1
            else:
                report.items_matched += 1
                changed += item.payload != task.payload
            for annotation in task.annotations:
                order = annotation.stage if annotation.stage is not None else (default.order if default else None)
                stage = stages.get(order)
                if annotation.kind == "label":
                    if not _already_here(annotation, item, stage, errors, report):
                        user = _annotator(annotation.identity, users, report)
                        _labels(annotation, item, stage, user, questions, errors, report)
                else:
                    _finals(annotation, item, stage, questions, errors, report)
            if len(errors) >= MAX_ERRORS:
                return changed
    return changed


def label_studio_import(*, project: AnnotationProject, content: bytes | str, stage_order: int | None = None):
    """Check the whole file, then write items, annotators, labels, gold and finals atomically.

    The file's tasks are decoded and read again at each pass (read, check, write), one at a time: the peak memory is
    the file and a batch of tasks, not the decoded file, every task's records and every matched item at once."""
    try:
        data = loads_array(content)
    except JSONInputError as exc:
        raise LabelStudioImportFailed([f"file: {exc}"]) from None
    questions = {q.key: q for q in project.questions.all()}
    read = read_label_studio_export(data, {key: choice_question(q) for key, q in questions.items()})
    if read.errors:
        raise LabelStudioImportFailed(read.errors)
    stages = {stage.order: stage for stage in project.stages.prefetch_related("questions")}
    if stage_order is not None and stage_order not in stages:
        raise LabelStudioImportFailed([f"stage: the project has no stage {stage_order}"])
    default = stages[stage_order] if stage_order is not None else (stages[min(stages)] if stages else None)
    errors = _check(project, read.tasks, stages, default)
    if errors:
        raise LabelStudioImportFailed(errors, errors.total)
    report = LabelStudioImportReport(warnings=read.warnings)
    errors = []
    with transaction.atomic():
        changed = _write(project, read.tasks, stages, default, questions, errors, report)
        if errors:
            raise LabelStudioImportFailed(errors)  # rolls the transaction back
    if changed:
        report.warnings.append(f"{changed} item(s) matched by id keep their stored content; the file's differs")
    return report
