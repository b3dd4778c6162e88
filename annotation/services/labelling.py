"""Writes for main labelling: next item, submit and resolution, revision, a stage's settings and item rule.

The next item is for an annotator who passed the gate; their submitted answers (validated like every label by
`workflow.answers.answers_validate`) are followed by the item's resolution once it has its N labels; the item rule says
which items are the stage's main work.

A submit locks the annotator's assignment and then the item's `MainItem` row, so the N-th label and the
resolution it triggers are decided by exactly one transaction, whichever annotator submits last.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone

from annotation.models import (
    Assignment,
    HeldRevision,
    Item,
    Label,
    LabelQuestion,
    LabelRevision,
    MainItem,
    Phase,
    Stage,
    StageLabelling,
)
from annotation.selectors.conflicts import stage_polarity_question
from annotation.selectors.revisions import latest_answers, resolution_started, revision_state, revision_window
from annotation.selectors.stage_items import stage_item_rule
from annotation.services import main_sql
from annotation.services.assignment import MainItemsSync, main_items_sync, next_assignment
from annotation.services.main_sql import LabellingAccess
from annotation.services.resolution import item_resolve_if_complete
from annotation.workflow import item_rules
from annotation.workflow.answers import MAX_SECONDS_PER_ITEM, Answer, active_seconds, answers_validate
from annotation.workflow.pilot_feedback import settings_problems
from annotation.workflow.revision_rules import revision_counts, revision_refusal
from annotation.workflow.training import Action, StepRefused, TrainingProgress, check_action


class NoAssignment(LookupError):
    """The item is not this annotator's to label in this phase."""


@dataclass(frozen=True)
class SubmitResult:
    assignment: Assignment
    created: bool


class ReservationExpired(NoAssignment):
    """The item's reservation expired and its slot went to someone else; the answers were not stored."""


class ItemRuleInvalid(ValueError):
    """A stage's item rule that cannot be stored; ``errors`` maps each field to what is wrong with it."""

    def __init__(self, errors: dict[str, str]):
        self.errors = errors
        super().__init__(" ".join(errors.values()))


@dataclass(frozen=True)
class LabellingProgress:
    mine: int  # items this annotator submitted in the stage
    items: int  # main items in the stage
    labels_done: int  # submitted main labels (assignments) in the stage, everyone's
    labels_needed: int  # items × overlap

    @property
    def stage_share(self) -> float:
        return self.labels_done / self.labels_needed if self.labels_needed else 0.0


def main_labelling_check(*, annotator, stage_id: int) -> LabellingAccess:
    """The stage and the annotator's standing in it, if they may label its main items now (passed, current
    guideline confirmed). Raises Stage.DoesNotExist (no such stage) or StepRefused.

    One statement (`services.main_sql.labelling_access`), because main labelling is the hot path; it
    also brings the stage's assignment settings and the annotator's count of submitted items. The rule is
    the training step machine's (`check_action(…, LABEL_MAIN)`), which here only needs the gate, the
    replacement and the guideline.
    """
    access = main_sql.labelling_access(stage_id=stage_id, annotator_id=annotator.pk)
    if access is None:
        raise Stage.DoesNotExist(f"No stage {stage_id}.")
    if not access.enrolled:
        raise StepRefused("You are not enrolled in this stage.")
    progress = TrainingProgress(
        current_guideline_version=access.guideline_version,
        confirmed_current_guideline=access.confirmed_current_guideline,
        examples_total=0,
        examples_seen=0,
        pilot_total=0,
        pilot_labelled=0,
        norming_done=False,
        qualification_total=0,
        qualification_labelled=0,
        gate_passed=access.gate_passed,
        replaced=access.replaced,
    )
    check_action(progress, Action.LABEL_MAIN)
    return access


def label_next(*, annotator, stage: Stage, checked: LabellingAccess | None = None) -> Assignment | None:
    """The item to label now (the same one until it is submitted), or None when nothing is left.

    ``checked``: what `main_labelling_check` returned, when the caller already made that check.
    """
    if checked is None:
        main_labelling_check(annotator=annotator, stage_id=stage.pk)
    return next_assignment(stage=stage, annotator=annotator)


def main_label_submit(
    *,
    annotator,
    stage: Stage,
    item: Item | int,
    answers: dict[str, Answer],
    seconds: float = 0.0,
    checked: LabellingAccess | None = None,
) -> SubmitResult:
    """Store the answers to a reserved main item (``item``: the item or its id); a repeated submit changes
    nothing (created=False). ``checked`` as for `label_next`.

    Validation is `workflow.answers.answers_validate`, the same as for pilot and qualification answers.
    Raises StepRefused (not passed), LabelInvalid (answers), ReservationExpired (no reservation of this
    annotator on this item, which includes an item that is not in the stage).
    """
    if checked is None:
        main_labelling_check(annotator=annotator, stage_id=stage.pk)
    question_ids = {q.key: q.pk for q in main_sql.stage_questions(stage)}  # validation and resolution reuse them
    answers_validate(stage.questions.all(), answers, unsure_enabled=stage.unsure_enabled)
    item_id = item if isinstance(item, int) else item.pk
    seconds = active_seconds(seconds)
    with transaction.atomic():
        assignment = main_sql.lock_assignment(stage_id=stage.pk, item_id=item_id, annotator_id=annotator.pk)
        if assignment is None:
            raise ReservationExpired(
                "This item is no longer reserved for you (the reservation expired and it went to someone else)."
            )
        if assignment.submitted_at is not None:
            return SubmitResult(assignment=assignment, created=False)
        # Serialises the last labels of one item, so exactly one submit sees N and resolves it.
        main_item = main_sql.lock_main_item(stage_id=stage.pk, item_id=item_id)
        now = timezone.now()
        main_sql.insert_main_labels(
            assignment_id=assignment.pk,
            labels=[
                (question_ids[key], answer.stored_value, answer.unsure, answer.stored_justification)
                for key, answer in answers.items()
            ],
            seconds=seconds,
            now=now,
        )
        main_sql.mark_submitted(assignment_id=assignment.pk, now=now)
        assignment.submitted_at = now
        item_resolve_if_complete(stage=stage, item_id=item_id, main_item=main_item)
        return SubmitResult(assignment=assignment, created=True)


class RevisionRefused(ValueError):
    """The label cannot be revised now (the item is settled, its discussion opened, or the window passed)."""


@dataclass(frozen=True)
class RevisionResult:
    assignment: Assignment
    revised: tuple[str, ...]  # question keys whose label got a new version (empty: nothing changed)


def _changed(latest: tuple[str, bool, str], answer: Answer) -> bool:
    return latest != (answer.stored_value, answer.unsure, answer.stored_justification)


def label_revise(
    *,
    annotator,
    stage: Stage,
    item: Item | int,
    answers: dict[str, Answer],
    seconds: float = 0.0,
    checked: LabellingAccess | None = None,
) -> RevisionResult:
    """Change the annotator's answers to a main item they submitted, within the stage's revision window
    (`workflow.revision_rules`), whatever the other annotators have done. While the item waits for its labels,
    each changed label keeps its earlier version as a `LabelRevision` (the audit trail) and the `Label` row
    takes the new answer, so agreement and the item's resolution (when its last label comes in) read the final
    pre-discussion labels. Once the item's resolution has started, the revision is stored as a `HeldRevision`
    and the labels already read stay as they are; the answer is the same either way. ``seconds`` (the active
    time of the revisit) is added to the item's time. Answers are validated as for a submit (every question
    answered).

    Raises StepRefused (not passed), LabelInvalid, NoAssignment (the annotator has not submitted this item)
    and RevisionRefused (the message says why: the window only).
    """
    if checked is None:
        checked = main_labelling_check(annotator=annotator, stage_id=stage.pk)
    window = revision_window(checked.stage)  # read with the check, as stored now
    main_sql.stage_questions(stage)
    answers_validate(stage.questions.all(), answers, unsure_enabled=stage.unsure_enabled)
    item_id = item if isinstance(item, int) else item.pk
    seconds = active_seconds(seconds)
    with transaction.atomic():
        assignment = main_sql.lock_assignment(stage_id=stage.pk, item_id=item_id, annotator_id=annotator.pk)
        if assignment is None or assignment.submitted_at is None:
            raise NoAssignment("You have not submitted this item in this stage.")
        main_item = main_sql.lock_main_item(stage_id=stage.pk, item_id=item_id)
        labels = {
            label.question.key: label
            for label in Label.objects.filter(assignment_id=assignment.pk, round=Label.Round.PRE).select_related(
                "question"
            )
        }
        latest = latest_answers(labels.values())
        changed = tuple(
            key for key, answer in answers.items() if key in labels and _changed(latest[labels[key].pk], answer)
        )
        now = timezone.now()
        refusal = revision_refusal(revision_state(stage=stage, assignment=assignment), window, now=now)
        if refusal is not None:
            raise RevisionRefused(refusal)
        if not changed:
            return RevisionResult(assignment=assignment, revised=())
        _add_seconds(assignment, labels.values(), seconds)
        started = resolution_started(stage=stage, item_id=item_id, main_item=main_item)
        if not revision_counts(resolution_started=started):
            HeldRevision.objects.bulk_create(
                [
                    HeldRevision(
                        label=labels[key],
                        value=answers[key].stored_value,
                        unsure=answers[key].unsure,
                        justification=answers[key].stored_justification,
                        given_at=now,
                    )
                    for key in changed
                ]
            )
            return RevisionResult(assignment=assignment, revised=changed)
        versions = {
            row["label_id"]: row
            for row in LabelRevision.objects.filter(label__in=[labels[key] for key in changed])
            .order_by("label_id", "version")  # the highest version of each label is read last
            .values("label_id", "version", "replaced_at")
        }
        revisions = []
        for key in changed:
            label, answer = labels[key], answers[key]
            previous = versions.get(label.pk)
            revisions.append(
                LabelRevision(
                    label=label,
                    version=previous["version"] + 1 if previous else 1,
                    value=label.value,
                    unsure=label.unsure,
                    justification=label.justification,
                    given_at=previous["replaced_at"] if previous else label.created_at,
                    replaced_at=now,
                )
            )
            label.value = answer.stored_value
            label.unsure = answer.unsure
            label.justification = answer.stored_justification
        LabelRevision.objects.bulk_create(revisions)
        Label.objects.bulk_update([labels[key] for key in changed], ["value", "unsure", "justification"])
        return RevisionResult(assignment=assignment, revised=changed)


def _add_seconds(assignment: Assignment, labels, seconds: float) -> None:
    """Add a revisit's active time to the item's time (every label of the item carries it)."""
    if seconds:
        item_seconds = max(label.seconds for label in labels)
        Label.objects.filter(assignment_id=assignment.pk, round=Label.Round.PRE).update(
            seconds=min(item_seconds + seconds, MAX_SECONDS_PER_ITEM)
        )


def labelling_progress(*, annotator, stage: Stage) -> LabellingProgress:
    """Two aggregate queries, whatever the number of items and labels."""
    items = MainItem.objects.filter(stage=stage).count()
    counts = Assignment.objects.filter(stage=stage, phase=Phase.MAIN, submitted_at__isnull=False).aggregate(
        everyone=Count("id"), mine=Count("id", filter=Q(annotator=annotator))
    )
    return LabellingProgress(
        mine=counts["mine"], items=items, labels_done=counts["everyone"], labels_needed=items * stage.overlap
    )


@transaction.atomic
def stage_labelling_configure(
    *,
    stage: Stage,
    strategy: str | None = None,
    seed: int | None = None,
    reservation_minutes: int | None = None,
    revision_minutes: int | None = None,
    revision_items: int | None = None,
    pilot_feedback: str | None = None,
    pilot_closed: bool | None = None,
) -> StageLabelling:
    """Set the stage's labelling settings; what is None is kept. The pilot's settings follow
    `workflow.pilot_feedback.settings_problems` (the model's ``clean`` applies it in the admin)."""
    settings, _ = StageLabelling.objects.get_or_create(stage=stage)
    pilot_feedback = pilot_feedback or None  # a form left empty: kept
    if pilot_feedback is not None or pilot_closed is not None:
        policy = settings.pilot_feedback if pilot_feedback is None else pilot_feedback
        closed = settings.pilot_closed if pilot_closed is None else bool(pilot_closed)
        problems = settings_problems(
            policy=policy, closed=closed, was_policy=settings.pilot_feedback, was_closed=settings.pilot_closed
        )
        if problems:
            raise ValueError(" ".join(problems))
        settings.pilot_feedback, settings.pilot_closed = policy, closed
    if strategy is not None:
        if strategy not in StageLabelling.Strategy.values:
            raise ValueError(f"Unknown strategy {strategy!r}.")
        settings.strategy = strategy
    if seed is not None:
        settings.seed = int(seed)
    if reservation_minutes is not None:
        if int(reservation_minutes) < 1:
            raise ValueError("A reservation lasts at least one minute.")
        settings.reservation_minutes = int(reservation_minutes)
    if revision_minutes is not None:
        if int(revision_minutes) < 0:
            raise ValueError("The revision window is 0 minutes (no revising) or more.")
        settings.revision_minutes = int(revision_minutes)
    if revision_items is not None:
        if not 0 <= int(revision_items) <= 100:
            raise ValueError("The revision window covers 0 to 100 recent items.")
        settings.revision_items = int(revision_items)
    settings.save()
    return settings


def stage_main_open(*, stage: Stage) -> int:
    """Put the items of the stage's rule (never its training items) into main labelling; how many there are."""
    return main_items_sync(stage).total


def default_source_question(source: Stage) -> LabelQuestion | None:
    """The question a settled rule reads when none is named: the one that says whether an item passed the
    stage (its first with positive values, as cross-stage conflicts read it), else the stage's only one."""
    question = stage_polarity_question(source)
    if question is not None:
        return question
    questions = list(source.questions.all()[:2])
    return questions[0] if len(questions) == 1 else None


@transaction.atomic
def stage_item_rule_set(
    *,
    stage: Stage,
    rule: str,
    source_stage: Stage | int | None = None,
    source_question: LabelQuestion | int | None = None,
    source_values: list[str] | None = None,
    item_ids: list[int] | None = None,
) -> tuple[StageLabelling, MainItemsSync | None]:
    """Set which items are the stage's main work: ``"all"`` the project's items, ``"settled"`` those an
    earlier ``source_stage`` settled with one of ``source_values`` of ``source_question`` (default: its
    question with positive values), or ``"list"`` the items ``item_ids`` in that order.

    Raises ItemRuleInvalid naming each wrong field (unknown or not earlier stage, a question the stage does
    not ask, values not among its choices, ids of items not in the project). If the stage's main labelling
    is open, its main items follow the new rule at once (items already handed out stay).
    """
    source_id = source_stage.pk if isinstance(source_stage, Stage) else source_stage
    question_id = source_question.pk if isinstance(source_question, LabelQuestion) else source_question
    stages = list(Stage.objects.filter(project_id=stage.project_id).prefetch_related("questions"))
    refs = [
        item_rules.StageRef(id=s.pk, order=s.order, name=s.name, questions={q.pk: q.values for q in s.questions.all()})
        for s in stages
    ]
    if rule == item_rules.SETTLED and question_id is None and source_id is not None:
        source = next((s for s in stages if s.pk == source_id), None)
        default = default_source_question(source) if source is not None else None
        question_id = default.pk if default is not None else None
    wanted = item_rules.ItemRule(
        rule=rule,
        source_stage=source_id,
        source_values=tuple(dict.fromkeys(str(v) for v in source_values or ())),
        item_ids=tuple(dict.fromkeys(int(i) for i in item_ids or ())),
    )
    listed = Item.objects.filter(project_id=stage.project_id, pk__in=wanted.item_ids).values_list("id", flat=True)
    problems = item_rules.rule_problems(
        wanted,
        stage=next(ref for ref in refs if ref.id == stage.pk),
        stages=refs,
        source_question=question_id,
        project_items=set(listed) if rule == item_rules.LIST else (),
    )
    if problems:
        raise ItemRuleInvalid(problems)
    settings, _ = StageLabelling.objects.select_for_update().get_or_create(stage=stage)
    settled = rule == item_rules.SETTLED
    settings.item_rule = rule
    settings.source_stage_id = source_id if settled else None
    settings.source_question_id = question_id if settled else None
    settings.source_values = list(wanted.source_values) if settled else []
    settings.item_ids = list(wanted.item_ids) if rule == item_rules.LIST else []
    settings.save(update_fields=["item_rule", "source_stage", "source_question", "source_values", "item_ids"])
    synced = main_items_sync(stage) if MainItem.objects.filter(stage=stage).exists() else None
    return settings, synced


@transaction.atomic
def stage_items_append(*, stage: Stage, item_ids: list[int]) -> tuple[StageLabelling, MainItemsSync | None, int]:
    """Add items to the end of a stage's explicit item list (those already on it are kept where they are): the
    settings, the sync of an open main labelling, and how many items joined the list. Raises ItemRuleInvalid
    when the stage does not hand out an explicit list, or an id is not an item of the project."""
    settings, _ = StageLabelling.objects.select_for_update().get_or_create(stage=stage)
    if settings.item_rule != item_rules.LIST:
        raise ItemRuleInvalid({"rule": "This stage does not hand out an explicit item list."})
    listed = list(settings.item_ids or [])
    added = [int(i) for i in dict.fromkeys(item_ids) if int(i) not in set(listed)]
    settings, synced = stage_item_rule_set(stage=stage, rule=item_rules.LIST, item_ids=[*listed, *added])
    return settings, synced, len(added)


def stage_item_rule_describe(settings: StageLabelling) -> str:
    """The rule in words, for the stage page and the report."""
    rule = stage_item_rule(settings)
    if rule.rule == item_rules.SETTLED and settings.source_stage_id:
        source = settings.source_stage
        question = settings.source_question
        values = " or ".join(question.choice_label(v) if question else v for v in rule.source_values)
        asked = f" on “{question.key}”" if question else ""
        return f"The items stage {source.order} ({source.name}) settled as {values}{asked}."
    if rule.rule == item_rules.LIST:
        return f"An explicit list of {len(rule.item_ids)} items."
    return "All the project's items."
