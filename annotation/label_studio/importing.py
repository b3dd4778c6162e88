"""Import of a Label Studio project export into an EduFair project, in one transaction.

Tasks become items (matched by ``data.external_id`` when the export came from EduFair), annotations become labels mapped
by question key, each Label Studio annotator becomes a pseudonymous annotator (``ls-`` and a hash of the identity
`reading` gives: the provenance's anonymous annotator, an e-mail, or the (instance, user number)), and ``gold`` /
``adjudication`` annotations (from the provenance region) become gold labels and adjudicated finals.

An annotation without provenance is a main-phase, before-discussion label of the stage given (default the
project's first); a Label Studio ground-truth star on such an annotation does not make it gold. Items made
here do not join an open main labelling: their labels are already given. Importing the same file twice
changes nothing, and so does importing a project's own labels back (recognised by their stored time in the
provenance). Anything `reading` cannot map refuses the whole file, and then nothing is written; so does a file
whose annotations Label Studio all gave to one user (`changes.one_user_refusal`). A task whose text was edited in
Label Studio, whose gold or final answer differs from EduFair's, or with a label changed in Label Studio (unless
``accept_revisions``: then kept as a `LabelRevision` beside the original, as an annotator's own revision is) is
refused on its own, in words (`changes`), and the rest of the file imported.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime

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
    LabelRevision,
    Stage,
)
from annotation.services.importers import more_errors_sentence
from annotation.subjects import subject_problem
from edufair_web.accounts.roles import ANNOTATOR, user_set_role
from edufair_web.json_input import JSONInputError, loads_array
from edufair_web.record_bounds import RecordTooLarge, json_list_check
from edufair_web.upload_limits import record_limit

from .changes import answer_changes, changed_refusal, edited_refusal, final_refusal, one_user_refusal
from .export import choice_question
from .formats import delimited_export
from .reading import (
    MAX_ERRORS,
    ReadAnnotation,
    ReadAnswer,
    ReadTask,
    annotator_username,
    edited_text,
    read_label_studio_export,
)

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

    def sentences(self) -> list[str]:
        """The listed errors, then how many more there are, as the item import says it."""
        return [*self.errors, more_errors_sentence(self.more)] if self.more else list(self.errors)


@dataclass
class LabelStudioImportReport:
    items_created: int = 0
    items_matched: int = 0
    annotators_created: int = 0
    labels_created: int = 0
    labels_unchanged: int = 0
    labels_revised: int = 0
    gold_labels: int = 0
    adjudications: int = 0
    tasks_refused: int = 0
    refused: list[str] = field(default_factory=list)  # why, task by task: the first MAX_ERRORS
    warnings: list[str] = field(default_factory=list)

    def refuse(self, reason: str) -> None:
        self.tasks_refused += 1
        if len(self.refused) < MAX_ERRORS:
            self.refused.append(reason)

    def as_dict(self) -> dict:
        return {
            "items_created": self.items_created,
            "items_matched": self.items_matched,
            "annotators_created": self.annotators_created,
            "labels_created": self.labels_created,
            "labels_unchanged": self.labels_unchanged,
            "labels_revised": self.labels_revised,
            "gold_labels": self.gold_labels,
            "adjudications": self.adjudications,
            "tasks_refused": self.tasks_refused,
            "refused": self.refused,
            "warnings": self.warnings,
        }

    def describe(self) -> str:
        return (
            f"Imported from Label Studio: {self.items_created} new item(s), {self.items_matched} matched, "
            f"{self.labels_created} label(s) ({self.labels_unchanged} already there, {self.labels_revised} revised) "
            f"from {self.annotators_created} new annotator(s), {self.gold_labels} gold label(s), "
            f"{self.adjudications} adjudicated final(s); {self.tasks_refused} task(s) refused."
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
    identities: set[str] = set()  # who labelled, over the whole file
    repeated: list[tuple[str, str, str]] = []  # (annotation, the earlier one, who): the same annotation twice
    repeated_tasks: set[str] = set()
    stage_keys = {order: {q.key for q in stage.questions.all()} for order, stage in stages.items()}
    for task in tasks:
        if project.categories and task.category and task.category not in project.categories:
            errors.append(f"{task.where}: category {task.category!r} is not a category of the project")
        wrong_subject = subject_problem(task.subject, project.subjects or ())
        if wrong_subject:
            errors.append(f"{task.where}: {wrong_subject}")
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
            if annotation.kind == "label":
                identities.add(annotation.identity)
            key = (annotation.kind, annotation.identity, order, annotation.round, annotation.method)
            if key in seen:
                repeated.append((annotation.where, seen[key], annotation.identity))
                repeated_tasks.add(task.where)
            seen[key] = annotation.where
    if repeated and len(identities) == 1 and repeated[0][2] in identities:
        errors.append(one_user_refusal(repeated[0][2], len(repeated_tasks)))
    else:
        for where, earlier, _ in repeated:
            errors.append(f"{where}: the same annotation as {earlier}")
    return errors


class _Annotators:
    """The pseudonymous annotators of the file's identities: looked up once each, made only when a label is written."""

    def __init__(self, report: LabelStudioImportReport):
        self.users: dict[str, User | None] = {}
        self.report = report

    def find(self, identity: str) -> User | None:
        username = annotator_username(identity)
        if username not in self.users:
            self.users[username] = User.objects.filter(username=username).first()
        return self.users[username]

    def get(self, identity: str) -> User:
        user = self.find(identity)
        if user is None:
            user, created = User.objects.get_or_create(username=annotator_username(identity))
            if created:
                user.set_unusable_password()
                user.save(update_fields=["password"])
                user_set_role(user=user, role=ANNOTATOR)
                self.report.annotators_created += 1
            self.users[user.username] = user
        return user


def _moment(value: datetime) -> datetime:
    """A time as the database compares it: a naive one is in the default time zone (DateTimeField's own rule)."""
    return timezone.make_aware(value) if timezone.is_naive(value) else value


class _Batch:
    """The rows of a batch of tasks' items as the database holds them, read with a few queries and kept up to date with
    the rows the batch adds, which are written together at its end (`flush`): every check the import makes (is this
    label already here, does this assignment exist, is this item's gold answer stored) is answered from here, as a
    query after each earlier write would answer it, instead of with one or more queries per task or per label."""

    def __init__(self, items: list[Item]):
        self.assignments: dict[tuple[int, int, int], Assignment] = {}  # (id(item), stage, annotator) -> assignment
        self.in_stage: dict[tuple[int, int], list[Assignment]] = {}  # (id(item), stage) -> its assignments there
        self.labels: dict[int, list[Label]] = {}  # id(assignment) -> its labels
        self.order: dict[int, tuple] = {}  # id(assignment) -> where the label queries' ordering puts it
        self.golds: dict[tuple[int, int], str] = {}  # (id(item), question) -> value
        self.finals: dict[tuple[int, int, int], str] = {}  # (stage, id(item), question) -> final value
        self.new_items: list[Item] = []
        self.new_assignments: list[Assignment] = []
        self.new_labels: list[Label] = []
        self.timed_labels: list[tuple[Label, datetime]] = []
        self.submitted: list[Assignment] = []
        self.new_golds: list[GoldLabel] = []
        self.new_finals: list[Adjudication] = []
        self.latest: dict[int, tuple[int, datetime]] = {}  # label pk -> (its latest revision's version, replaced_at)
        self.new_revisions: list[LabelRevision] = []
        self.revised: list[Label] = []
        if not items:
            return
        by_pk = {item.pk: item for item in items}
        for assignment in Assignment.objects.filter(item__in=items).order_by("pk"):
            assignment.item = by_pk[assignment.item_id]
            self._add_assignment(assignment, (0, assignment.pk))
        pks = {assignment.pk: assignment for assignment in self.assignments.values()}
        labels = list(Label.objects.filter(assignment__item__in=items).order_by("pk"))
        questions = {
            question.pk: question
            for question in LabelQuestion.objects.filter(pk__in={label.question_id for label in labels})
        }
        for label in labels:
            label.question = questions[label.question_id]  # one instance a question, not one a label
            self.labels[id(pks[label.assignment_id])].append(label)
        for label_pk, version, replaced_at in (
            LabelRevision.objects.filter(label__assignment__item__in=items)
            .order_by("label_id", "version")  # the highest version of each label is read last
            .values_list("label_id", "version", "replaced_at")
        ):
            self.latest[label_pk] = (version, replaced_at)
        for gold in GoldLabel.objects.filter(item__in=items):
            self.golds[id(by_pk[gold.item_id]), gold.question_id] = gold.value
        for final in Adjudication.objects.filter(item__in=items):
            self.finals[final.stage_id, id(by_pk[final.item_id]), final.question_id] = final.final_value

    def _add_assignment(self, assignment: Assignment, order: tuple) -> None:
        self.assignments[id(assignment.item), assignment.stage_id, assignment.annotator_id] = assignment
        self.in_stage.setdefault((id(assignment.item), assignment.stage_id), []).append(assignment)
        self.labels[id(assignment)] = []
        self.order[id(assignment)] = order

    def item_create(self, item: Item) -> None:
        self.new_items.append(item)

    def assignment(self, stage: Stage, item: Item, user: User, phase: str, submitted: datetime) -> Assignment:
        """The annotator's assignment to the item in the stage, made (a later id than any stored) if there is none."""
        assignment = self.assignments.get((id(item), stage.pk, user.pk))
        if assignment is None:
            assignment = Assignment(stage=stage, item=item, annotator=user, phase=phase, submitted_at=submitted)
            self._add_assignment(assignment, (1, len(self.new_assignments)))
            self.new_assignments.append(assignment)
        return assignment

    def stored_at(self, item: Item, stage: Stage, phase: str, round_: str, at: datetime) -> Assignment | None:
        """The assignment of the item in the stage with a label of that phase and round stored at that time; of two,
        the later one (the order Label.Meta gives a query)."""
        at = _moment(at)
        found = [
            self.order[id(assignment)]
            for assignment in self.in_stage.get((id(item), stage.pk), ())
            for label in self.labels[id(assignment)]
            if label.phase == phase
            and label.round == round_
            and label.created_at is not None
            and _moment(label.created_at) == at
        ]
        if not found:
            return None
        last = max(found)
        return next(a for a in self.in_stage[(id(item), stage.pk)] if self.order[id(a)] == last)

    def stored(self, item: Item, stage: Stage, user: User | None) -> Assignment | None:
        return None if user is None else self.assignments.get((id(item), stage.pk, user.pk))

    def labels_of(self, assignment: Assignment, round_: str) -> dict[str, Label]:
        return {label.question.key: label for label in self.labels[id(assignment)] if label.round == round_}

    def label_create(self, label: Label, at: datetime | None) -> None:
        label.created_at = _moment(at) if at else None  # None: the time of writing, which no check matches
        self.labels[id(label.assignment)].append(label)
        self.new_labels.append(label)
        if at:
            self.timed_labels.append((label, at))

    def revise(self, label: Label, answer: ReadAnswer, now: datetime) -> None:
        """Keep the label's answer as its next revision and give it the new one (`services.labelling`'s rule)."""
        previous = self.latest.get(label.pk)
        self.new_revisions.append(
            LabelRevision(
                label=label,
                version=previous[0] + 1 if previous else 1,
                value=label.value,
                unsure=label.unsure,
                justification=label.justification,
                given_at=previous[1] if previous else label.created_at,
                replaced_at=now,
            )
        )
        self.latest[label.pk] = (self.new_revisions[-1].version, now)
        label.value, label.unsure, label.justification = answer.value, answer.unsure, answer.justification
        self.revised.append(label)

    def submit(self, assignment: Assignment, submitted: datetime) -> None:
        assignment.submitted_at = submitted
        if assignment.pk is not None:
            self.submitted.append(assignment)

    def gold(self, item: Item, question: LabelQuestion, value: str) -> tuple[str, bool]:
        """The stored gold answer and whether it is made here (get_or_create's answer)."""
        stored = self.golds.get((id(item), question.pk))
        if stored is not None:
            return stored, False
        self.golds[id(item), question.pk] = value
        self.new_golds.append(GoldLabel(item=item, question=question, value=value))
        return value, True

    def final(self, stage: Stage, item: Item, question: LabelQuestion, value: str, method: str) -> tuple[str, bool]:
        stored = self.finals.get((stage.pk, id(item), question.pk))
        if stored is not None:
            return stored, False
        self.finals[stage.pk, id(item), question.pk] = value
        self.new_finals.append(
            Adjudication(
                stage=stage,
                item=item,
                question=question,
                final_value=value,
                method=method,
                note="Imported from Label Studio.",
            )
        )
        return value, True

    def flush(self) -> None:
        """Write what the batch added, in the order the rows were made (so with the ids one write each would give)."""
        Item.objects.bulk_create(self.new_items)
        Assignment.objects.bulk_create(self.new_assignments)
        Label.objects.bulk_create(self.new_labels)  # created_at: now, then the provenance's time where it has one
        for label, at in self.timed_labels:
            label.created_at = at
        Label.objects.bulk_update([label for label, _ in self.timed_labels], ["created_at"], batch_size=MATCH_BATCH)
        Assignment.objects.bulk_update(self.submitted, ["submitted_at"], batch_size=MATCH_BATCH)
        LabelRevision.objects.bulk_create(self.new_revisions)
        Label.objects.bulk_update(self.revised, ["value", "unsure", "justification"], batch_size=MATCH_BATCH)
        GoldLabel.objects.bulk_create(self.new_golds)
        Adjudication.objects.bulk_create(self.new_finals)


def _stored(annotation: ReadAnnotation, item: Item, stage: Stage, batch: _Batch, annotators: _Annotators):
    """(the stored assignment the annotation is of, whether it is the project's own label coming back), looked up
    without writing anything. A project's own label is found by its stored time in the provenance: Label Studio
    names its annotator by its own id, so without this a round trip into the same project would add every label
    again under another name. Any other by its annotator's assignment to the item in the stage."""
    if annotation.labelled_at is not None:
        assignment = batch.stored_at(item, stage, annotation.phase, annotation.round, annotation.labelled_at)
        if assignment is not None:
            return assignment, True
    return batch.stored(item, stage, annotators.find(annotation.identity)), False


def _stored_answers(assignment: Assignment | None, round_: str, batch: _Batch) -> dict[str, Label]:
    return {} if assignment is None or assignment.pk is None else batch.labels_of(assignment, round_)


def _refusal(task: ReadTask, item: Item | None, stages, default, questions, batch: _Batch, annotators, accept) -> str:
    """Why the task is refused on its own (`changes`), or "" when it can be written. The text Label Studio showed
    is edited when it is neither what EduFair exported beside it (the file's own payload) nor, for a matched item,
    what EduFair holds; a matched item whose text EduFair changed since the export keeps its stored content (the
    import's warning counts it)."""
    matched = item is not None and item.pk is not None
    edited = edited_text(task.shown, task.payload) if task.own_payload else None
    if matched and (edited or not task.own_payload):
        edited = edited_text(task.shown, item.payload) if isinstance(item.payload, dict) else None
    if edited:
        return edited_refusal(task, edited)
    if not matched:
        return ""
    changes = []
    for annotation in task.annotations:
        order = annotation.stage if annotation.stage is not None else (default.order if default else None)
        stage = stages.get(order)
        if annotation.kind == "label":
            assignment, _ = _stored(annotation, item, stage, batch, annotators)
            labels = _stored_answers(assignment, annotation.round, batch)
            stored = {key: (label.value, label.unsure, label.justification) for key, label in labels.items()}
            changes += answer_changes(annotation.where, stored, annotation.answers)
            continue
        for key, answer in annotation.answers.items():
            question_pk = questions[key].pk
            if annotation.kind == "gold":
                stored_value = batch.golds.get((id(item), question_pk))
            else:
                stored_value = batch.finals.get((stage.pk, id(item), question_pk))
            if stored_value is not None and stored_value != answer.value:
                return final_refusal(task, annotation.where, annotation.kind, key, stored_value, answer.value)
    if changes and not accept:
        return changed_refusal(task, changes)
    return ""


def _labels(annotation: ReadAnnotation, item: Item, stage: Stage, questions, batch: _Batch, annotators, errors, report):
    """Write one label annotation: its new answers as labels, a changed answer as a revision (the task was refused
    before when revisions are not accepted), an unchanged one counted."""
    assignment, _ = _stored(annotation, item, stage, batch, annotators)
    submitted = annotation.labelled_at or timezone.now()
    if assignment is None:
        assignment = batch.assignment(stage, item, annotators.get(annotation.identity), annotation.phase, submitted)
    if assignment.phase != annotation.phase:
        errors.append(
            f"{annotation.where}: this annotator's labels of the item are {assignment.phase}, not {annotation.phase}"
        )
        return
    existing = batch.labels_of(assignment, annotation.round)
    now = timezone.now()
    for key, answer in annotation.answers.items():
        label = existing.get(key)
        if label is not None:
            if (label.value, label.unsure, label.justification) != (answer.value, answer.unsure, answer.justification):
                batch.revise(label, answer, now)
                report.labels_revised += 1
            else:
                report.labels_unchanged += 1
            continue
        batch.label_create(
            Label(
                assignment=assignment,
                question=questions[key],
                phase=annotation.phase,
                round=annotation.round,
                value=answer.value,
                unsure=answer.unsure,
                justification=answer.justification,
                seconds=min(annotation.seconds, MAX_SECONDS_PER_ITEM),
            ),
            annotation.labelled_at,
        )
        report.labels_created += 1
    if assignment.submitted_at is None:
        batch.submit(assignment, submitted)


def _finals(annotation: ReadAnnotation, item: Item, stage: Stage | None, questions, batch: _Batch, report):
    """Write a gold or adjudication annotation (one that differs from the stored answer refused its task before)."""
    for key, answer in annotation.answers.items():
        if annotation.kind == "gold":
            _, created = batch.gold(item, questions[key], answer.value)
            report.gold_labels += created
        else:
            _, created = batch.final(stage, item, questions[key], answer.value, annotation.method)
            report.adjudications += created


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
    accept_revisions: bool = False,
) -> int:
    """Write every task not refused on its own (or stop at MAX_ERRORS errors); the number of matched items whose
    stored content differs.

    A batch of MATCH_BATCH tasks is read from the database and written to it with a few queries (`_Batch`): its
    items' rows are their own (a file names each item once), so no later batch needs what an earlier one wrote."""
    annotators = _Annotators(report)
    changed = 0
    for tasks_batch in _batches(tasks, MATCH_BATCH):
        existing = {
            item.external_id: item
            for item in Item.objects.filter(project=project, external_id__in=[t.external_id for t in tasks_batch])
        }
        batch = _Batch(list(existing.values()))
        for task in tasks_batch:
            item = existing.get(task.external_id)
            refusal = _refusal(task, item, stages, default, questions, batch, annotators, accept_revisions)
            if refusal:
                report.refuse(refusal)
                continue
            if item is None:
                item = Item(
                    project=project,
                    external_id=task.external_id,
                    payload=task.payload,
                    subject=task.subject,
                    category=task.category,
                    modality=task.modality,
                    metadata={"source": "label-studio", "task_id": task.task_id},
                )
                batch.item_create(item)
                report.items_created += 1
            else:
                report.items_matched += 1
                changed += item.payload != task.payload
            for annotation in task.annotations:
                order = annotation.stage if annotation.stage is not None else (default.order if default else None)
                stage = stages.get(order)
                if annotation.kind == "label":
                    _labels(annotation, item, stage, questions, batch, annotators, errors, report)
                else:
                    _finals(annotation, item, stage, questions, batch, report)
            if len(errors) >= MAX_ERRORS:
                return changed
        batch.flush()
    return changed


def label_studio_import(
    *,
    project: AnnotationProject,
    content: bytes | str,
    stage_order: int | None = None,
    accept_revisions: bool = False,
    instance: str = "",
):
    """Check the whole file, then write items, annotators, labels, revisions, gold and finals atomically, leaving out
    the tasks refused on their own (`LabelStudioImportReport.refused` says why).

    `accept_revisions`: a label changed in Label Studio is kept as a revision beside the original instead of refusing
    its task. `instance`: the name of the Label Studio instance whose user numbers the file uses ("" for one unnamed
    instance), so that two instances' users are not merged.

    The file's tasks are decoded and read again at each pass (read, check, write), one at a time: the peak memory is
    the file and a batch of tasks, not the decoded file, every task's records and every matched item at once."""
    delimited = delimited_export(content)
    if delimited:
        raise LabelStudioImportFailed([delimited])
    try:  # a task over the limit is refused before any task is decoded
        json_list_check(content, record_limit(), kind="task")
        data = loads_array(content)
    except (JSONInputError, RecordTooLarge) as exc:
        raise LabelStudioImportFailed([f"file: {exc}"]) from None
    questions = {q.key: q for q in project.questions.all()}
    read = read_label_studio_export(data, {key: choice_question(q) for key, q in questions.items()}, instance)
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
        changed = _write(project, read.tasks, stages, default, questions, errors, report, accept_revisions)
        if errors:
            raise LabelStudioImportFailed(errors)  # rolls the transaction back
    if changed:
        report.warnings.append(f"{changed} item(s) matched by id keep their stored content; the file's differs")
    if report.tasks_refused:
        more = f" (the first {len(report.refused)} are listed)" if report.tasks_refused > len(report.refused) else ""
        report.warnings.insert(0, f"{report.tasks_refused} task(s) refused and left out{more}; the rest imported")
    return report
