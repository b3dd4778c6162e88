"""Reads for adjudication: the queue, who may see an item, and an item's labels cut to what its viewer may see.

The queue holds the items waiting for a discussion or a reviewer; who may see an item's labels and discussion is read as
the facts `workflow.blindness` decides on; an item's labels, justifications and comments come side by side."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db.models import Count, Q

from annotation.models import Adjudication, Assignment, Comment, Item, Label, MainItem, Phase, Stage, Thread
from annotation.workflow import blindness
from annotation.workflow.blindness import DiscussionVisibility, ItemFacts
from edufair_web.accounts.roles import ADJUDICATOR, RESEARCHER, has_role

QUEUE_STATUSES = (MainItem.Status.DISCUSSION, MainItem.Status.SENIOR_REVIEW, MainItem.Status.REVIEWER_QUEUE)


def disputed_questions(stage: Stage, item: Item) -> list[str]:
    """The questions the discussion is about: those not settled yet."""
    settled = set(Adjudication.objects.filter(stage=stage, item=item).values_list("question__key", flat=True))
    return [key for key in stage.questions.values_list("key", flat=True) if key not in settled]


def adjudication_queue(*, stage: Stage | None = None, project=None):
    """Items waiting for a discussion to end or for a reviewer, oldest first."""
    rows = MainItem.objects.filter(status__in=QUEUE_STATUSES).select_related("item", "stage", "stage__project")
    if stage is not None:
        rows = rows.filter(stage=stage)
    if project is not None:
        rows = rows.filter(stage__project=project)
    return rows.order_by("stage__project_id", "stage__order", "position", "id")


def is_moderator(user) -> bool:
    """Adjudicators and researchers: they see every label, name and discussion."""
    return has_role(user, ADJUDICATOR, RESEARCHER)


def moderator_ids(user_ids) -> frozenset[int]:
    """Which of ``user_ids`` are adjudicators or researchers (superusers hold every role)."""
    ids = set(user_ids)
    if not ids:
        return frozenset()
    rows = (
        get_user_model()
        .objects.filter(pk__in=ids)
        .filter(Q(is_superuser=True) | Q(groups__name__in=(ADJUDICATOR, RESEARCHER)))
        .values_list("pk", flat=True)
    )
    return frozenset(rows)


def discussion_facts(*, stage: Stage, item: Item) -> ItemFacts:
    """The item's state as the blindness rule reads it."""
    annotators = tuple(
        Assignment.objects.filter(stage=stage, item=item, phase=Phase.MAIN, submitted_at__isnull=False)
        .order_by("submitted_at", "id")
        .values_list("annotator_id", flat=True)
    )
    status = MainItem.objects.filter(stage=stage, item=item).values_list("status", flat=True).first()
    thread_open = (
        Thread.objects.filter(stage=stage, item=item, kind=Thread.Kind.ADJUDICATION)
        .values_list("is_open", flat=True)
        .first()
    )
    return ItemFacts(
        discussion_policy=stage.resolution_policy == Stage.Resolution.DISCUSSION_SENIOR,
        overlap=stage.overlap,
        annotators=annotators,
        disputed=tuple(disputed_questions(stage, item)),
        in_discussion=status == MainItem.Status.DISCUSSION,
        discussion_open=bool(thread_open),
    )


def discussion_visibility_for(*, user, stage: Stage, item: Item) -> DiscussionVisibility | None:
    """What ``user`` may see of the item's labels and discussion; None: nothing (answer 404)."""
    return blindness.discussion_visibility(
        viewer_id=user.pk, viewer_is_moderator=is_moderator(user), facts=discussion_facts(stage=stage, item=item)
    )


def item_side_by_side(*, stage: Stage, item: Item, visibility: DiscussionVisibility) -> dict:
    """Per question the viewer may see: every annotator's first answer and post-discussion answer with
    justifications, and (for moderators) the decision. Annotators appear as "Annotator 1…N" in the order they
    submitted, the viewer's own column marked ``you``; usernames and times only in a moderator's view."""
    full = visibility.full
    questions = [q for q in stage.questions.all() if visibility.shows_question(q.key)]
    labels = (
        Label.objects.filter(
            assignment__stage=stage,
            assignment__item=item,
            phase=Phase.MAIN,
            assignment__submitted_at__isnull=False,
            question__in=questions,
        )
        .select_related("assignment__annotator")
        .annotate(n_revisions=Count("revisions"))
        .order_by("assignment__submitted_at", "assignment_id")
    )
    cells: dict[tuple[int, int, str], Label] = {}
    usernames: dict[int, str] = {}
    for label in labels:
        annotator = label.assignment.annotator
        usernames[annotator.pk] = annotator.username
        cells[(annotator.pk, label.question_id, label.round)] = label
    annotators = []
    for annotator_id, name in visibility.names.items():
        who = {"name": name, "you": visibility.is_viewer(annotator_id)}
        if full:
            who |= {"id": annotator_id, "username": usernames.get(annotator_id, "")}
        annotators.append((annotator_id, who))
    decisions = (
        {a.question_id: a for a in Adjudication.objects.filter(stage=stage, item=item).select_related("decided_by")}
        if full
        else {}
    )
    rows = []
    for question in questions:
        answers = [
            {
                "annotator": who,
                "pre": _shown(question, cells.get((annotator_id, question.id, Label.Round.PRE)), full),
                "post": _shown(question, cells.get((annotator_id, question.id, Label.Round.POST)), full),
            }
            for annotator_id, who in annotators
        ]
        decision = decisions.get(question.id)
        rows.append(
            {
                "question": question,
                "answers": answers,
                "decision": decision,
                "decision_label": question.choice_label(decision.final_value) if decision else "",
            }
        )
    thread = Thread.objects.filter(stage=stage, item=item, kind=Thread.Kind.ADJUDICATION).first()
    return {
        "full": full,
        "questions": rows,
        "annotators": [who for _, who in annotators],
        "thread": thread,
        "comments": discussion_comments(thread=thread, visibility=visibility) if thread else [],
    }


def discussion_comments(*, thread: Thread, visibility: DiscussionVisibility) -> list[dict]:
    """A discussion's comments, oldest first, each author named as the viewer may see them."""
    comments = list(Comment.objects.filter(thread=thread).select_related("author").order_by("created_at", "id"))
    moderators = moderator_ids(c.author_id for c in comments if c.author_id not in visibility.names)
    return [
        {
            "id": c.pk,
            "author": blindness.author_name(
                visibility,
                author_id=c.author_id,
                username=c.author.username,
                author_is_moderator=c.author_id in moderators,
            ),
            "you": visibility.is_viewer(c.author_id),
            "body": c.body,
            "pinned": c.pinned,
            "created_at": c.created_at,
        }
        for c in comments
    ]


def _shown(question, label: Label | None, full: bool) -> dict | None:
    if label is None:
        return None
    shown = {
        "value": "unsure" if label.unsure else label.value,
        "label": "Unsure" if label.unsure else question.choice_label(label.value),
        "justification": label.justification,
    }
    if full:
        shown["seconds"] = label.seconds
        shown["revisions"] = label.n_revisions  # earlier versions its annotator replaced (the audit trail)
    return shown


def adjudication_threads(*, project=None, stage: Stage | None = None, is_open: bool | None = None) -> list[dict]:
    """The item discussions (adjudication threads) for adjudicators: id, item, reason, open or closed, the
    number of comments and the item's status, oldest first. Two queries."""

    threads = Thread.objects.filter(kind=Thread.Kind.ADJUDICATION).select_related("item", "stage")
    if project is not None:
        threads = threads.filter(stage__project=project)
    if stage is not None:
        threads = threads.filter(stage=stage)
    if is_open is not None:
        threads = threads.filter(is_open=is_open)
    threads = list(threads.annotate(n_comments=Count("comments")).order_by("created_at", "id"))
    statuses = {
        (row["stage_id"], row["item_id"]): row["status"]
        for row in MainItem.objects.filter(
            stage_id__in={t.stage_id for t in threads}, item_id__in={t.item_id for t in threads}
        ).values("stage_id", "item_id", "status")
    }
    return [
        {
            "id": t.pk,
            "project": t.stage.project_id,
            "stage": t.stage_id,
            "item": t.item_id,
            "external_id": t.item.external_id,
            "reason": t.reason,
            "open": t.is_open,
            "comments": t.n_comments,
            "status": statuses.get((t.stage_id, t.item_id)),
            "created_at": t.created_at,
        }
        for t in threads
    ]


def my_discussion_threads(*, annotator, stage: Stage | None = None, open_only: bool = False) -> list[Thread]:
    """The discussion threads of the main items the annotator submitted (their annotators disagreed), open or
    closed (only open with `open_only`), with their item and stage: the one answer to "my discussions" that the
    labelling page and the API share."""
    mine = Assignment.objects.filter(annotator=annotator, phase=Phase.MAIN, submitted_at__isnull=False)
    if stage is not None:
        mine = mine.filter(stage=stage)
    pairs = set(mine.values_list("stage_id", "item_id"))
    threads = Thread.objects.filter(
        kind=Thread.Kind.ADJUDICATION, stage_id__in={s for s, _ in pairs}, item_id__in={i for _, i in pairs}
    )
    if open_only:
        threads = threads.filter(is_open=True)
    ordered = threads.select_related("item", "stage").order_by("stage_id", "created_at", "id")
    return [t for t in ordered if (t.stage_id, t.item_id) in pairs]


def my_open_discussions(*, annotator) -> list[Thread]:
    """The open discussions the annotator may read now (the blindness rule's visibility), for the labelling page."""
    return [
        t
        for t in my_discussion_threads(annotator=annotator, open_only=True)
        if discussion_visibility_for(user=annotator, stage=t.stage, item=t.item) is not None
    ]


def my_disputed_items(*, annotator, stage: Stage | None = None) -> list[dict]:
    """The main items the annotator labelled whose discussion opened (their annotators disagreed): the
    thread, open or closed, the item's status, and whether they gave every post-discussion answer. No
    label is shown here; the discussion itself is served as the blindness rule allows."""
    threads = my_discussion_threads(annotator=annotator, stage=stage)
    statuses = {
        (row["stage_id"], row["item_id"]): row["status"]
        for row in MainItem.objects.filter(
            stage_id__in={t.stage_id for t in threads}, item_id__in={t.item_id for t in threads}
        ).values("stage_id", "item_id", "status")
    }
    answered = set(
        Label.objects.filter(
            assignment__annotator=annotator,
            round=Label.Round.POST,
            assignment__item_id__in={t.item_id for t in threads},
        ).values_list("assignment__stage_id", "assignment__item_id", "question__key")
    )
    rows = []
    for t in threads:
        disputed = disputed_questions(t.stage, t.item)
        rows.append(
            {
                "stage": t.stage_id,
                "item": t.item_id,
                "external_id": t.item.external_id,
                "thread": t.pk,
                "open": t.is_open,
                "status": statuses.get((t.stage_id, t.item_id)),
                "reason": t.reason,
                "answered": all((t.stage_id, t.item_id, key) in answered for key in disputed) if disputed else True,
            }
        )
    return rows


def main_item_of(stage: Stage, item: Item) -> MainItem | None:
    """The item's row in the stage's main round (None for a gold, pilot or qualification item)."""
    return MainItem.objects.filter(stage=stage, item=item).first()


def adjudication_thread(stage: Stage, item: Item) -> Thread | None:
    """The item's discussion in the stage, open or closed (None before one opened)."""
    return Thread.objects.filter(stage=stage, item=item, kind=Thread.Kind.ADJUDICATION).first()


def next_queued_item() -> MainItem | None:
    """The oldest item waiting for a discussion or a reviewer, anywhere."""
    return adjudication_queue().first()


def queue_thread_ids(rows) -> dict[tuple[int, int], int]:
    """(stage id, item id) → the discussion thread's id, for the queue's ``rows`` that have one."""
    return {
        (stage_id, item_id): thread_id
        for stage_id, item_id, thread_id in Thread.objects.filter(
            kind=Thread.Kind.ADJUDICATION,
            stage_id__in={row.stage_id for row in rows},
            item_id__in={row.item_id for row in rows},
        ).values_list("stage_id", "item_id", "id")
    }
