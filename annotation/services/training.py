"""Writes for training: guidelines, worked examples, training sets, the pilot, norming and the gate.

Guidelines have versions and confirmations; the training sets are the pilot and qualification sets, chosen here;
finishing the pilot scores it and opens norming threads, which take comments and pins.

Gold isolation is kept here at every door that writes what all annotators read: a guideline version (and
the clarifications pinned into it) may not name, quote or explain a training item
(`workflow.gold_isolation`), and a worked example is never an item whose gold a stage tests.
"""

from __future__ import annotations

from django.db import transaction
from django.db.models import Max, Q
from django.utils import timezone

from annotation.models import (
    Comment,
    Enrollment,
    ExampleView,
    GoldLabel,
    Guideline,
    GuidelineConfirmation,
    Item,
    Label,
    LabelQuestion,
    Phase,
    Stage,
    Thread,
    TrainingItem,
    WorkedExample,
)
from annotation.selectors.stage_items import training_closures
from annotation.selectors.training import (
    gate_params,
    gold_comparisons,
    guideline_current,
    training_counts,
    training_progress,
    training_secrets,
)
from annotation.services.assignment import project_main_items_sync
from annotation.workflow.gate import gate_decide, gold_score
from annotation.workflow.gold_isolation import text_leaks
from annotation.workflow.pilot import PilotSample, PoolItem, sample_pilot
from annotation.workflow.training import Action, StepRefused, check_action

CLARIFICATIONS_HEADING = "## Clarifications from the norming discussion"


class SetupError(ValueError):
    """A researcher's request that the stage's data cannot support (the message says why; ``field``, when
    known, names the field of the request at fault)."""

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


# --- Guidelines -------------------------------------------------------------------------------------


@transaction.atomic
def guideline_publish(
    *, stage: Stage, text: str, change_note: str = "", by=None, include_pins: bool = True
) -> Guideline:
    """A new guideline version. Pinned norming clarifications not yet in a version are appended to it, as
    general rules: without the item they came from. Every annotator of the stage must confirm the new
    version before their next step. Refused when the text would name, quote or explain a pilot or
    qualification item (every recruit reads the guideline before the pilot)."""
    if not text.strip():
        raise SetupError("The guideline text is empty.")
    pins = (
        list(
            Comment.objects.filter(
                thread__stage=stage,
                thread__kind=Thread.Kind.NORMING,
                pinned=True,
                included_in_guideline__isnull=True,
            )
        )
        if include_pins
        else []
    )
    if pins:
        text = (
            text.rstrip()
            + "\n\n"
            + CLARIFICATIONS_HEADING
            + "\n\n"
            + "\n".join(f"- {pin.body.strip()}" for pin in pins)
        )
    leaks = text_leaks(text, training_secrets(stage.project))
    if leaks:
        raise SetupError(
            "The guideline would give away gold of the pilot or qualification test: it "
            + "; ".join(leaks)
            + ". Write the rule without the item (unpin a clarification that names it)."
        )
    latest = stage.guidelines.select_for_update().aggregate(v=Max("version"))["v"] or 0
    guideline = Guideline.objects.create(
        stage=stage, version=latest + 1, text=text, change_note=change_note, created_by=by
    )
    Comment.objects.filter(pk__in=[pin.pk for pin in pins]).update(included_in_guideline=guideline)
    return guideline


def guideline_confirm(*, enrollment: Enrollment, version: int | None = None) -> GuidelineConfirmation:
    """Confirm reading the current guideline. ``version``, when given, must be the current one (a page
    opened before a new version was published cannot confirm the new text unread)."""
    check_action(training_progress(enrollment), Action.CONFIRM_GUIDELINE)
    guideline = guideline_current(enrollment.stage)
    if version is not None and guideline.version != int(version):
        raise StepRefused(f"Version {guideline.version} of the guideline is out; read it before confirming.")
    confirmation, _ = GuidelineConfirmation.objects.get_or_create(enrollment=enrollment, guideline=guideline)
    return confirmation


# --- Worked examples --------------------------------------------------------------------------------


def worked_example_check(*, stage: Stage, item: Item, question: LabelQuestion, kind: str, value: str) -> None:
    """The rules of a worked example, on every write (the API's create and update, the page, the admin): one of the
    stage's questions, an item of its project, a value among the choices, and never an item whose gold a stage asking
    this question tests (every recruit reads the examples before the pilot and the qualification test)."""
    if item.project_id != stage.project_id:
        raise SetupError("The item must belong to the stage's project.", field="item")
    if not stage.questions.filter(pk=question.pk).exists():
        raise SetupError(f"{question.key} is not a question of this stage.", field="question")
    if value not in question.values:
        raise SetupError(f"{value!r} is not one of the question's choices.", field="value")
    if TrainingItem.objects.filter(Q(stage=stage) | Q(stage__questions=question), item=item).exists():
        raise SetupError(
            "This item is in the pilot or qualification test of a stage that asks this question; "
            "it cannot be an example (its answer would be shown before the test).",
            field="item",
        )
    if kind not in WorkedExample.Kind.values:
        raise SetupError(f"Unknown kind {kind!r}.", field="kind")


def stage_questions_check(*, stage: Stage | None, project, questions) -> None:
    """A stage's questions, on every write (the API's create and update, the admin): the project's own; and on a
    stored stage, held to the worked examples' rule (`worked_example_check`) from the other side: its examples still
    teach one of its questions, and no example of a question it gains shows the answer of an item in its pilot or
    qualification test."""
    for question in questions:
        if project is not None and question.project_id != project.pk:
            raise SetupError(f"{question.key} belongs to another project.", field="questions")
    if stage is None or stage.pk is None:
        return
    question_ids = {question.pk for question in questions}
    orphaned = WorkedExample.objects.filter(stage=stage).exclude(question_id__in=question_ids)
    if orphaned.exists():
        keys = sorted(set(orphaned.values_list("question__key", flat=True)))
        raise SetupError(
            f"Worked examples of this stage teach {', '.join(keys)}; delete them before the stage stops asking it.",
            field="questions",
        )
    gained = question_ids - set(stage.questions.values_list("id", flat=True))
    tested = TrainingItem.objects.filter(stage=stage).values("item_id")
    if gained and WorkedExample.objects.filter(question_id__in=gained, item_id__in=tested).exists():
        raise SetupError(
            "A worked example of a question this stage would gain is an item of its pilot or qualification test "
            "(its answer would be shown before the test).",
            field="questions",
        )


@transaction.atomic
def worked_example_add(
    *, stage: Stage, item: Item, question: LabelQuestion, kind: str, value: str, rationale: str
) -> WorkedExample:
    worked_example_check(stage=stage, item=item, question=question, kind=kind, value=value)
    position = (WorkedExample.objects.filter(stage=stage).aggregate(p=Max("position"))["p"] or 0) + 1
    example, _ = WorkedExample.objects.update_or_create(
        stage=stage,
        item=item,
        question=question,
        defaults={"kind": kind, "value": value, "rationale": rationale, "position": position},
    )
    return example


def example_mark_seen(*, enrollment: Enrollment, example: WorkedExample) -> None:
    check_action(training_progress(enrollment), Action.VIEW_EXAMPLES)
    if example.stage_id != enrollment.stage_id:
        raise StepRefused("That example belongs to another stage.")
    ExampleView.objects.get_or_create(enrollment=enrollment, example=example)
    progress = training_progress(enrollment)
    if progress.examples_done and enrollment.examples_completed_at is None:
        Enrollment.objects.filter(pk=enrollment.pk).update(examples_completed_at=timezone.now())


# --- Pilot and qualification sets -------------------------------------------------------------------


def _gold_items(stage: Stage):
    """The project's items with gold for every question of the stage (none when it asks nothing)."""
    question_ids = list(stage.questions.values_list("id", flat=True))
    if not question_ids:
        return Item.objects.none()
    items = Item.objects.filter(project=stage.project)
    for question_id in question_ids:
        items = items.filter(gold_labels__question_id=question_id)
    return items.distinct()


def _eligibility(stage: Stage) -> tuple[list[PoolItem], str]:
    """The stage's gold pool and, in words, how many gold items are eligible and why the others are not."""
    gold = {i.id: i for i in _gold_items(stage)}
    closures = [
        (
            "worked examples of this stage",
            set(WorkedExample.objects.filter(stage=stage).values_list("item_id", flat=True)),
        ),
        (
            "already in this stage's pilot or test",
            set(TrainingItem.objects.filter(stage=stage).values_list("item_id", flat=True)),
        ),
        *training_closures(stage),
    ]
    closed: set[int] = set()
    parts = []
    for reason, item_ids in closures:
        counted = (item_ids & gold.keys()) - closed
        closed |= counted
        if counted:
            parts.append(f"{len(counted)} {'is' if len(counted) == 1 else 'are'} {reason}")
    pool = [
        PoolItem(id=i.id, category=i.category, subject=i.subject) for pk, i in sorted(gold.items()) if pk not in closed
    ]
    note = f"{len(pool)} of {len(gold)} gold items are eligible"
    return pool, note + (": " + "; ".join(parts) if parts else "")


def gold_pool(stage: Stage) -> list[PoolItem]:
    """Items with gold for every stage question, not worked examples, not already in a training set of this
    stage or of a stage asking one of its questions (`selectors.stage_items.training_closures`), nor handed
    out as main work."""
    return _eligibility(stage)[0]


@transaction.atomic
def training_set_choose(
    *, stage: Stage, phase: str, size: int | None = None, seed: int = 0, accept_uneven: bool = False
) -> PilotSample:
    """Choose the stage's pilot (or qualification) items from its gold pool, spread evenly over the
    project's categories × subjects. Refuses an uneven pilot unless ``accept_uneven`` (the qualification
    test only needs distinct gold items, so an uneven spread is accepted there); a refusal says how many
    gold items are eligible and why the others are not.

    A pilot set larger than the stage's pilot size is a pilot pool: each annotator labels their own draw
    of pilot-size items from it (`workflow.pilot_draw`)."""
    if phase not in TrainingItem.Phase.values:
        raise SetupError(f"Unknown phase {phase!r}.")
    if Label.objects.filter(assignment__stage=stage, phase=phase).exists():
        raise SetupError(f"Annotators have already labelled this stage's {phase}; it cannot be redrawn.")
    TrainingItem.objects.filter(stage=stage, phase=phase).delete()
    size = size or (stage.pilot_size if phase == TrainingItem.Phase.PILOT else stage.qualification_size)
    pool, eligibility = _eligibility(stage)
    if not pool:
        if not _gold_items(stage).exists():
            raise SetupError("No item has gold labels for every question of this stage.")
        raise SetupError(f"No gold item is left for the {phase}: {eligibility}.")
    project = stage.project
    sample = sample_pilot(
        pool, size, categories=project.categories or None, subjects=project.subjects or None, seed=seed
    )
    if phase == TrainingItem.Phase.QUALIFICATION:
        if len(sample.item_ids) < size:
            raise SetupError(f"Only {len(sample.item_ids)} gold items are left for a test of {size} ({eligibility}).")
    elif not sample.even and not accept_uneven:
        raise SetupError("An even spread is impossible: " + "; ".join(sample.problems) + f" ({eligibility}).")
    TrainingItem.objects.bulk_create(
        [
            TrainingItem(stage=stage, item_id=item_id, phase=phase, position=i)
            for i, item_id in enumerate(sample.item_ids)
        ]
    )
    project_main_items_sync(stage.project_id)  # training items leave the main items they were in
    return sample


# --- Pilot completion and norming -------------------------------------------------------------------


@transaction.atomic
def pilot_complete_if_done(enrollment: Enrollment) -> bool:
    """After the last pilot answer: store the pilot score and open norming threads on disagreements."""
    done, total = training_counts(enrollment, Phase.PILOT)
    if total == 0 or done < total:
        return False
    enrollment = Enrollment.objects.select_for_update().get(pk=enrollment.pk)
    if enrollment.pilot_submitted_at is None:
        score = gold_score(gold_comparisons(enrollment, Phase.PILOT), enrollment.stage.unsure_rule)
        enrollment.pilot_submitted_at = timezone.now()
        enrollment.pilot_score = score.agreement
        enrollment.pilot_coverage = score.coverage
        enrollment.save(update_fields=["pilot_submitted_at", "pilot_score", "pilot_coverage"])
    norming_threads_open(enrollment.stage)
    return True


def norming_threads_open(stage: Stage) -> list[Thread]:
    """A thread per pilot item where submitted annotators disagreed with each other or with gold."""
    pilot_items = list(TrainingItem.objects.filter(stage=stage, phase=Phase.PILOT).values_list("item_id", flat=True))
    gold = {(g.item_id, g.question_id): g.value for g in GoldLabel.objects.filter(item_id__in=pilot_items)}
    answers: dict[tuple[int, int], set[str]] = {}
    for item_id, question_id, value, unsure in Label.objects.filter(
        assignment__stage=stage, phase=Phase.PILOT, assignment__submitted_at__isnull=False
    ).values_list("assignment__item_id", "question_id", "value", "unsure"):
        answers.setdefault((item_id, question_id), set()).add("unsure" if unsure else value)
    reasons: dict[int, str] = {}
    for (item_id, question_id), values in answers.items():
        if len(values) > 1:
            reasons[item_id] = "annotators disagreed"
        elif (item_id, question_id) in gold and values != {gold[(item_id, question_id)]}:
            reasons.setdefault(item_id, "disagreement with gold")
    threads = []
    for item_id, reason in reasons.items():
        thread, created = Thread.objects.get_or_create(
            stage=stage, item_id=item_id, kind=Thread.Kind.NORMING, defaults={"reason": reason}
        )
        if not created and thread.reason != reason and reason == "annotators disagreed":
            Thread.objects.filter(pk=thread.pk).update(reason=reason)
        threads.append(thread)
    return threads


def norming_acknowledge(*, enrollment: Enrollment) -> None:
    check_action(training_progress(enrollment), Action.NORMING)
    Enrollment.objects.filter(pk=enrollment.pk, norming_acknowledged_at__isnull=True).update(
        norming_acknowledged_at=timezone.now()
    )
    enrollment.refresh_from_db(fields=["norming_acknowledged_at"])


def comment_post(*, thread: Thread, author, body: str, moderator: bool) -> Comment:
    """Annotators post in their stage's norming threads once their pilot is in; moderators in any norming
    thread. An item's discussion takes comments through `services.adjudication.discussion_comment` only."""
    if thread.kind != Thread.Kind.NORMING:
        raise SetupError("This is an item's discussion: comment on its discussion page.")
    if not body.strip():
        raise SetupError("The comment is empty.")
    if not moderator:
        enrollment = Enrollment.objects.filter(stage=thread.stage, user=author).first()
        if enrollment is None:
            raise StepRefused("You are not enrolled in this stage.")
        check_action(training_progress(enrollment), Action.READ_NORMING)
    return Comment.objects.create(thread=thread, author=author, body=body.strip())


def comment_pin(*, comment: Comment, pinned: bool = True) -> Comment:
    """A moderator pins a clarification; the next guideline version carries it. Refused for a comment that
    names, quotes or explains a pilot or qualification item: the guideline reaches recruits before their
    pilot, so a clarification must be a general rule."""
    if pinned and comment.thread.kind != Thread.Kind.NORMING:
        raise SetupError("Only clarifications in norming threads are pinned into the guideline.")
    if pinned:
        leaks = text_leaks(comment.body, training_secrets(comment.thread.stage.project))
        if leaks:
            raise SetupError(
                "This comment cannot be pinned: it "
                + "; ".join(leaks)
                + ". Post the clarification as a general rule, without the item, and pin that."
            )
    Comment.objects.filter(pk=comment.pk).update(pinned=pinned)
    comment.pinned = pinned
    return comment


# --- The gate ---------------------------------------------------------------------------------------


@transaction.atomic
def qualification_complete_if_done(enrollment: Enrollment) -> bool:
    done, total = training_counts(enrollment, Phase.QUALIFICATION)
    if total == 0 or done < total:
        return False
    enrollment_gate(enrollment=enrollment)
    return True


@transaction.atomic
def enrollment_gate_record(
    *,
    enrollment: Enrollment,
    rule: str,
    detail: dict,
    pilot_score: float | None = None,
    qualification_score: float | None = None,
) -> Enrollment:
    """Record a pass decided outside this stage's training: carried over from a stage the annotator passed (a
    re-labelling stage after a rubric workshop), or set for a demo account. With `enrollment_gate` the only writer
    of the gate fields; an enrolment already decided keeps its decision."""
    enrollment = Enrollment.objects.select_for_update().get(pk=enrollment.pk)
    if enrollment.gate_passed is not None:
        return enrollment
    enrollment.status = Enrollment.Status.PASSED
    enrollment.gate_passed = True
    enrollment.gate_rule = rule
    enrollment.gate_detail = detail
    enrollment.pilot_score = pilot_score
    enrollment.qualification_score = qualification_score
    enrollment.decided_at = timezone.now()
    enrollment.save()
    return enrollment


def enrollment_gate(*, enrollment: Enrollment) -> Enrollment:
    """Decide pass or fail from the stored pilot and qualification answers; store scores, rule and reasons."""
    enrollment = Enrollment.objects.select_for_update().select_related("stage").get(pk=enrollment.pk)
    if enrollment.gate_passed is not None:
        return enrollment
    decision = gate_decide(
        gold_comparisons(enrollment, Phase.PILOT),
        gold_comparisons(enrollment, Phase.QUALIFICATION),
        gate_params(enrollment.stage),
    )
    now = timezone.now()
    enrollment.qualification_submitted_at = enrollment.qualification_submitted_at or now
    enrollment.pilot_score = decision.pilot.agreement
    enrollment.pilot_coverage = decision.pilot.coverage
    enrollment.qualification_score = decision.qualification.agreement
    enrollment.qualification_correct = decision.qualification.correct
    enrollment.qualification_total = decision.qualification.total
    enrollment.qualification_coverage = decision.qualification.coverage
    enrollment.gate_passed = decision.passed
    enrollment.gate_rule = decision.rule
    enrollment.gate_detail = decision.as_dict()
    enrollment.decided_at = now
    enrollment.status = Enrollment.Status.PASSED if decision.passed else Enrollment.Status.FAILED
    enrollment.save()
    return enrollment
