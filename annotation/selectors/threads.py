"""Reads of threads: who may open a norming or discussion thread, and what they see of it.

Norming threads (pilot items) are for the annotators of their stage once their own pilot is in, and for moderators; an
item's discussion (an adjudication thread) is only what the blindness rule (`workflow.blindness`) lets the viewer see.
Comment authors are named as that rule says: usernames for moderators, pseudonyms for annotators."""

from __future__ import annotations

from dataclasses import dataclass

from annotation.models import Comment, Enrollment, GoldLabel, Label, Phase, Thread
from annotation.selectors.adjudication import (
    discussion_comments,
    discussion_visibility_for,
    is_moderator,
    moderator_ids,
)
from annotation.selectors.training import pilot_item_ids, training_progress
from annotation.workflow import blindness
from annotation.workflow.blindness import DiscussionVisibility
from annotation.workflow.training import Action, check_action


class ThreadHidden(LookupError):
    """The viewer may not know this thread exists: answer as if there were no such thread (404)."""


@dataclass(frozen=True)
class ThreadAccess:
    thread: Thread
    moderator: bool
    enrollment: Enrollment | None  # an annotator's enrolment in the thread's stage (norming threads)
    discussion: DiscussionVisibility | None  # an adjudication thread's visibility for the viewer


def thread_access(*, user, thread: Thread) -> ThreadAccess:
    """The viewer's access to ``thread``. Raises `ThreadHidden` when they may not see it at all, and
    `workflow.training.StepRefused` when it is a norming thread of their stage that their training has not
    reached yet (their pilot comes first)."""
    moderator = is_moderator(user)
    if thread.kind == Thread.Kind.ADJUDICATION:
        visibility = discussion_visibility_for(user=user, stage=thread.stage, item=thread.item)
        if visibility is None:
            raise ThreadHidden("No such thread.")
        return ThreadAccess(thread=thread, moderator=moderator, enrollment=None, discussion=visibility)
    if thread.kind != Thread.Kind.NORMING:
        raise ThreadHidden("No such thread.")
    if moderator:
        return ThreadAccess(thread=thread, moderator=True, enrollment=None, discussion=None)
    enrollment = Enrollment.objects.filter(stage_id=thread.stage_id, user=user).select_related("stage").first()
    if enrollment is None:
        raise ThreadHidden("No such thread.")
    check_action(training_progress(enrollment), Action.READ_NORMING)  # its pilot gold must be open to them
    if thread.item_id not in pilot_item_ids(enrollment):
        raise ThreadHidden("No such thread.")  # an item of another annotator's pilot draw
    return ThreadAccess(thread=thread, moderator=False, enrollment=enrollment, discussion=None)


def thread_comments(*, access: ThreadAccess, user) -> list[dict]:
    """The thread's comments, oldest first, with the author named for this viewer and ``you`` marked."""
    if access.discussion is not None:
        return discussion_comments(thread=access.thread, visibility=access.discussion)
    comments = list(Comment.objects.filter(thread=access.thread).select_related("author").order_by("created_at", "id"))
    moderators = moderator_ids(c.author_id for c in comments)
    names = blindness.norming_thread_names(
        viewer_id=user.pk,
        viewer_is_moderator=access.moderator,
        authors=[c.author_id for c in comments if c.author_id not in moderators],
    )
    return [
        {
            "id": c.pk,
            "author": blindness.norming_author_name(
                names, author_id=c.author_id, username=c.author.username, author_is_moderator=c.author_id in moderators
            ),
            "you": c.author_id == user.pk,
            "body": c.body,
            "pinned": c.pinned,
            "created_at": c.created_at,
        }
        for c in comments
    ]


def norming_thread_rows(*, access: ThreadAccess, user) -> list[dict]:
    """Per question of a norming thread's stage: gold with its rationale and the viewer's own pilot answer.
    An annotator sees gold only as feedback on their own submitted pilot label of this item in this stage."""
    thread = access.thread
    stage = thread.stage
    questions = list(stage.questions.all())
    mine = {
        lab.question_id: lab
        for lab in Label.objects.filter(
            assignment__stage=stage,
            assignment__item=thread.item,
            assignment__annotator=user,
            assignment__phase=Phase.PILOT,
            assignment__submitted_at__isnull=False,
            round=Label.Round.PRE,
        )
    }
    show_gold = access.moderator or bool(mine)
    gold = (
        {g.question_id: g for g in GoldLabel.objects.filter(item=thread.item, question__in=questions)}
        if show_gold
        else {}
    )
    rows = []
    for question in questions:
        label = mine.get(question.id)
        rows.append(
            {
                "prompt": question.prompt,
                "gold": question.choice_label(gold[question.id].value) if question.id in gold else "—",
                "rationale": gold[question.id].rationale if question.id in gold else "",
                "mine": ("Unsure" if label.unsure else question.choice_label(label.value)) if label else "—",
            }
        )
    return rows
