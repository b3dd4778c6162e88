"""Writes for adjudication: comments in an item's discussion, annotators' post-discussion answers,
closing a discussion, a reviewer's decisions, and the researcher's dispositions of cross-stage conflicts.
Thin doors over `workflow.resolution` and `workflow.conflicts`, shared by pages, API and tests."""

from __future__ import annotations

from annotation.models import Assignment, Comment, CrossStageConflict, Item, Phase, Stage, Thread
from annotation.services.labels import Answer
from annotation.workflow import conflicts, resolution
from annotation.workflow.resolution import ResolutionRefused
from edufair_web.accounts.roles import ADJUDICATOR, RESEARCHER, has_role


def _discussion_thread(stage: Stage, item: Item) -> Thread:
    thread = Thread.objects.filter(stage=stage, item=item, kind=Thread.Kind.ADJUDICATION).first()
    if thread is None:
        raise ResolutionRefused("There is no discussion on this item.")
    return thread


def may_join_discussion(user, stage: Stage, item: Item) -> bool:
    """Adjudicators and researchers, and the annotators who labelled the item (after submitting)."""
    if has_role(user, ADJUDICATOR, RESEARCHER):
        return True
    return Assignment.objects.filter(
        stage=stage, item=item, annotator=user, phase=Phase.MAIN, submitted_at__isnull=False
    ).exists()


def discussion_comment(*, stage: Stage, item: Item, author, body: str) -> Comment:
    if not body.strip():
        raise ResolutionRefused("The comment is empty.")
    if not may_join_discussion(author, stage, item):
        raise ResolutionRefused("Only this item's annotators and the adjudicators take part in its discussion.")
    thread = _discussion_thread(stage, item)
    if not thread.is_open:
        raise ResolutionRefused("This discussion is closed.")
    return Comment.objects.create(thread=thread, author=author, body=body.strip())


def discussion_answers_submit(*, stage: Stage, item: Item, annotator, answers: dict[str, Answer]) -> int:
    return resolution.post_discussion_label_submit(stage=stage, item=item, annotator=annotator, answers=answers)


def discussion_close(*, stage: Stage, item: Item):
    return resolution.discussion_close(stage=stage, item=item)


def adjudication_decide(*, stage: Stage, item: Item, decisions: dict[str, str], note: str, by):
    return resolution.reviewer_decide(stage=stage, item=item, decisions=decisions, note=note, by=by)


def conflict_dispose(*, conflict: CrossStageConflict, disposition: str, by, note: str = "") -> CrossStageConflict:
    return conflicts.conflict_dispose(conflict=conflict, disposition=disposition, by=by, note=note)


def conflicts_detect(*, project) -> list[CrossStageConflict]:
    return conflicts.conflicts_detect(project=project)
