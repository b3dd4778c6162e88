"""Writes for adjudication: discussions, reviewer decisions and dispositions of cross-stage conflicts.

A discussion takes comments and annotators' post-discussion answers, and is closed; the dispositions are the
researcher's. Thin doors over `services.resolution` and `services.conflicts`, shared by pages, API and tests. Who may
take part in a discussion is the blindness rule's to say (`workflow.blindness`), as for who may read it."""

from __future__ import annotations

from annotation.models import Comment, CrossStageConflict, Item, Stage, Thread
from annotation.selectors.adjudication import discussion_visibility_for
from annotation.services import conflicts, resolution
from annotation.services.resolution import ResolutionRefused
from annotation.workflow.answers import Answer


def _discussion_thread(stage: Stage, item: Item) -> Thread:
    thread = Thread.objects.filter(stage=stage, item=item, kind=Thread.Kind.ADJUDICATION).first()
    if thread is None:
        raise ResolutionRefused("There is no discussion on this item.")
    return thread


def discussion_comment(*, stage: Stage, item: Item, author, body: str) -> Comment:
    """A comment in the item's open discussion, by one of the annotators the blindness rule lets in (all N
    labels in, the item disputed) or by a moderator."""
    if not body.strip():
        raise ResolutionRefused("The comment is empty.")
    thread = _discussion_thread(stage, item)
    visibility = discussion_visibility_for(user=author, stage=stage, item=item)
    if visibility is None:
        raise ResolutionRefused("Only this item's annotators and the adjudicators take part in its discussion.")
    if not thread.is_open or not visibility.may_comment:
        raise ResolutionRefused("This discussion is closed.")
    return Comment.objects.create(thread=thread, author=author, body=body.strip())


def discussion_answers_submit(*, stage: Stage, item: Item, annotator, answers: dict[str, Answer]) -> int:
    """An annotator's answers after the discussion, while the blindness rule lets them into it."""
    visibility = discussion_visibility_for(user=annotator, stage=stage, item=item)
    if visibility is None or not visibility.may_revise:
        raise ResolutionRefused("There is no open discussion of this item for you.")
    return resolution.post_discussion_label_submit(stage=stage, item=item, annotator=annotator, answers=answers)


def discussion_close(*, stage: Stage, item: Item):
    return resolution.discussion_close(stage=stage, item=item)


def adjudication_decide(*, stage: Stage, item: Item, decisions: dict[str, str], note: str, by):
    return resolution.reviewer_decide(stage=stage, item=item, decisions=decisions, note=note, by=by)


def conflict_dispose(*, conflict: CrossStageConflict, disposition: str, by, note: str = "") -> CrossStageConflict:
    return conflicts.conflict_dispose(conflict=conflict, disposition=disposition, by=by, note=note)


def conflicts_detect(*, project) -> list[CrossStageConflict]:
    return conflicts.conflicts_detect(project=project)
