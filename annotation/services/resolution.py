"""Settling main items once they have their N labels: the stage's policy, discussion and reviewer decisions.

The pure rules of the policies are in `resolution_rules`; the discussion is among an item's annotators, opened and
closed here; the reviewer is a senior one. Every settled question becomes an `Adjudication` row: method, final value,
who, note.

Statuses of a `MainItem` as it moves: labelling → resolved (unanimous / majority), or
labelling → discussion → resolved (the discussion made it unanimous) or senior_review → resolved, or
labelling → reviewer_queue (no majority) → resolved. Post-discussion answers are `Label` rows with
round "post"; the pre-discussion ones are never changed, so agreement can be reported both ways.
"""

from __future__ import annotations

from collections import defaultdict

from django.db import transaction
from django.utils import timezone

from annotation.agreement import UNSURE
from annotation.models import Adjudication, Assignment, Item, Label, MainItem, Phase, Stage, Thread
from annotation.selectors.adjudication import adjudication_thread, disputed_questions
from annotation.services import main_sql
from annotation.workflow import resolution_rules as rules
from annotation.workflow.answers import post_discussion_answers_validate

STATUS_OF_STEP = {
    rules.AWAIT_LABELS: MainItem.Status.LABELLING,
    rules.OPEN_DISCUSSION: MainItem.Status.DISCUSSION,
    rules.SENIOR_REVIEW: MainItem.Status.SENIOR_REVIEW,
    rules.REVIEWER_QUEUE: MainItem.Status.REVIEWER_QUEUE,
    rules.RESOLVED: MainItem.Status.RESOLVED,
}
AUTOMATIC_NOTES = {
    rules.UNANIMOUS: "All annotators gave this value.",
    rules.MAJORITY: "More than half of the labels gave this value.",
    rules.DISCUSSION: "The annotators agreed on this value after discussion.",
}


class ResolutionRefused(ValueError):
    """A decision that does not fit the item's state (the message says why)."""


def _label_value(label_value: str, unsure: bool) -> str:
    return UNSURE if unsure else label_value


def item_labels(stage: Stage, item: Item) -> tuple[dict[str, dict[int, str]], dict[str, dict[int, str]]]:
    """(pre, post): question key → annotator id → value (Unsure as `UNSURE`), for submitted main labels."""
    pre: dict[str, dict[int, str]] = defaultdict(dict)
    post: dict[str, dict[int, str]] = defaultdict(dict)
    rows = Label.objects.filter(
        assignment__stage=stage, assignment__item=item, phase=Phase.MAIN, assignment__submitted_at__isnull=False
    ).values_list("question__key", "assignment__annotator_id", "round", "value", "unsure")
    for key, annotator_id, round_, value, unsure in rows:
        (post if round_ == Label.Round.POST else pre)[key][annotator_id] = _label_value(value, unsure)
    questions = [q.key for q in main_sql.stage_questions(stage)]  # read once per stage object
    return {key: dict(pre.get(key, {})) for key in questions}, {key: dict(post.get(key, {})) for key in questions}


def item_resolve(*, stage: Stage, item: Item, main_item: MainItem | None = None) -> rules.ItemResolution:
    """Apply the stage's policy to the item's labels; record what is settled; set the item's status.

    Idempotent: questions already settled (an Adjudication exists) keep their decision. Call after a
    label is submitted, after a discussion closes, and after a reviewer decides. ``main_item``: the item's
    row when the caller already holds its lock.
    """
    with transaction.atomic():
        if main_item is None:
            main_item = MainItem.objects.select_for_update().get(stage=stage, item=item)
        pre, post = item_labels(stage, item)
        # Only the discussion policy ever opens a discussion thread.
        has_discussion = stage.resolution_policy == Stage.Resolution.DISCUSSION_SENIOR
        thread = adjudication_thread(stage, item) if has_discussion else None
        discussion_over = thread is not None and not thread.is_open
        decision = rules.resolve_item(
            pre,
            policy=stage.resolution_policy,
            required=stage.overlap,
            after_discussion_by_question=post if discussion_over else None,
        )
        questions = {q.key: q for q in main_sql.stage_questions(stage)}
        settled = set(Adjudication.objects.filter(stage=stage, item=item).values_list("question__key", flat=True))
        newly_settled = [
            Adjudication(
                stage=stage,
                item=item,
                question=questions[key],
                method=resolution.method,
                final_value=resolution.final_value,
                note=AUTOMATIC_NOTES.get(resolution.method, ""),
            )
            for key, resolution in decision.questions.items()
            if resolution.is_resolved and key not in settled
        ]
        Adjudication.objects.bulk_create(newly_settled)
        settled |= {adjudication.question.key for adjudication in newly_settled}
        pending = [key for key in decision.questions if key not in settled]
        step = decision.next_step if pending else rules.RESOLVED
        if step == rules.OPEN_DISCUSSION and thread is None:
            Thread.objects.create(
                stage=stage,
                item=item,
                kind=Thread.Kind.ADJUDICATION,
                reason="Annotators disagreed on: " + ", ".join(decision.questions_needing(rules.OPEN_DISCUSSION)),
            )
        status = STATUS_OF_STEP[step]
        if main_item.status != status:
            main_item.status = status
            main_item.resolved_at = timezone.now() if status == MainItem.Status.RESOLVED else None
            main_item.save(update_fields=["status", "resolved_at"])
        return decision


def item_resolve_if_complete(*, stage: Stage, item_id: int, main_item: MainItem | None) -> bool:
    """Resolve when the item has its N submitted labels (called by the submit, under ``main_item``'s lock;
    None when the assignment was made outside `next_assignment`, as the generic label door's tests do)."""
    if main_sql.submitted_count(stage_id=stage.pk, item_id=item_id) < stage.overlap:
        return False
    item = main_item.item if main_item is not None else Item.objects.get(pk=item_id)
    item_resolve(stage=stage, item=item, main_item=main_item)
    return True


# --- Discussion -------------------------------------------------------------------------------------


def discussion_annotators(stage: Stage, item: Item) -> set[int]:
    return set(
        Assignment.objects.filter(stage=stage, item=item, phase=Phase.MAIN, submitted_at__isnull=False).values_list(
            "annotator_id", flat=True
        )
    )


def post_discussion_label_submit(*, stage: Stage, item: Item, annotator, answers: dict) -> int:
    """An annotator's answers after the discussion (``answers``: question key → `workflow.answers.Answer`)
    to the disputed questions. Stored apart from the first answers (round "post"); may be changed while the
    discussion is open. When every annotator of the item has answered, the discussion closes itself."""
    with transaction.atomic():
        thread = (
            Thread.objects.select_for_update()
            .filter(stage=stage, item=item, kind=Thread.Kind.ADJUDICATION)
            .order_by("pk")  # the default ordering would join and lock the stage row
            .first()
        )
        if thread is None or not thread.is_open:
            raise ResolutionRefused("There is no open discussion on this item.")
        assignment = Assignment.objects.filter(
            stage=stage, item=item, annotator=annotator, phase=Phase.MAIN, submitted_at__isnull=False
        ).first()
        if assignment is None:
            raise ResolutionRefused("Only the annotators of this item take part in its discussion.")
        disputed = disputed_questions(stage, item)
        questions = {q.key: q for q in stage.questions.filter(key__in=disputed)}
        post_discussion_answers_validate(questions, answers, unsure_enabled=stage.unsure_enabled)
        stored = 0
        for key, answer in answers.items():
            if key not in questions:
                continue
            Label.objects.update_or_create(
                assignment=assignment,
                question=questions[key],
                round=Label.Round.POST,
                defaults={
                    "phase": Phase.MAIN,
                    "value": answer.stored_value,
                    "unsure": answer.unsure,
                    "justification": answer.stored_justification,
                },
            )
            stored += 1
        answered = set(
            Label.objects.filter(
                assignment__stage=stage,
                assignment__item=item,
                round=Label.Round.POST,
                question__key__in=disputed,
            ).values_list("assignment__annotator_id", "question__key")
        )
        everyone = discussion_annotators(stage, item)
        if all((annotator_id, key) in answered for annotator_id in everyone for key in disputed):
            discussion_close(stage=stage, item=item)
        return stored


def discussion_close(*, stage: Stage, item: Item) -> rules.ItemResolution:
    """End the discussion: what it made unanimous is settled ("discussion"), the rest goes to the senior."""
    with transaction.atomic():
        updated = Thread.objects.filter(stage=stage, item=item, kind=Thread.Kind.ADJUDICATION, is_open=True).update(
            is_open=False
        )
        if not updated and adjudication_thread(stage, item) is None:
            raise ResolutionRefused("There is no discussion on this item.")
        return item_resolve(stage=stage, item=item)


# --- Senior reviewer / reviewer queue ---------------------------------------------------------------


def reviewer_decide(*, stage: Stage, item: Item, decisions: dict[str, str], note: str, by) -> rules.ItemResolution:
    """The senior reviewer (discussion policy) or the reviewer (majority policy, no majority) decides the
    questions still open. A discussion still running is closed first, so what it settled stands."""
    if not note.strip():
        raise ResolutionRefused("Say why in a note: every resolution records one.")
    with transaction.atomic():
        main_item = MainItem.objects.select_for_update().filter(stage=stage, item=item).first()
        if main_item is None:
            # A gold, pilot or qualification item of the project is not labelled in this stage's main round.
            raise ResolutionRefused("This item is not one of this stage's main items.")
        if main_item.status == MainItem.Status.DISCUSSION:
            discussion_close(stage=stage, item=item)
            main_item.refresh_from_db()
        if main_item.status not in (MainItem.Status.SENIOR_REVIEW, MainItem.Status.REVIEWER_QUEUE):
            raise ResolutionRefused(f"This item is not waiting for a reviewer ({main_item.get_status_display()}).")
        pending = disputed_questions(stage, item)
        missing = [key for key in pending if not decisions.get(key)]
        if missing:
            raise ResolutionRefused("Decide every open question: " + ", ".join(missing))
        questions = {q.key: q for q in stage.questions.filter(key__in=pending)}
        for key in pending:
            value = decisions[key]
            if value not in questions[key].values:
                raise ResolutionRefused(f"{value!r} is not one of the choices of {key}.")
            resolution = rules.reviewer_decision(value)
            Adjudication.objects.create(
                stage=stage,
                item=item,
                question=questions[key],
                method=resolution.method,
                final_value=resolution.final_value,
                decided_by=by,
                note=note.strip(),
            )
        return item_resolve(stage=stage, item=item, main_item=main_item)
