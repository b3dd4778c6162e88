"""Blind labelling as one pure rule: who may see other annotators' labels on an item, and under which names.

It says whether a viewer may see other annotators' labels on a main item, which of its questions, and under which names.
Every page, fragment and API answer that shows an item's discussion (or a thread's comments) asks here first; the
callers read the facts from the database.

The rule: adjudicators and researchers ("moderators") see everything. An annotator sees other annotators'
answers on an item only when the stage resolves by discussion, all N labels of the item are in, the item is
disputed (waiting in discussion, with questions still unsettled) and its discussion is open — and then only
the disputed questions, with every annotator named "Annotator k" (k in order of submission, the same for
everyone looking at the item) and their own column marked as theirs. Never in a majority stage, never for a
settled item, never before their own label and every other is in, never after the discussion closed.

Pure: plain data in, plain data out (no Django).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

MODERATOR_NAME = "Adjudicator"
OTHER_NAME = "Another annotator"  # an author who is neither one of the item's annotators nor a moderator


@dataclass(frozen=True)
class ItemFacts:
    """What the rule needs to know about one main item in one stage."""

    discussion_policy: bool  # the stage resolves disagreements by discussion (not by majority)
    overlap: int  # N: labels each item needs
    annotators: Sequence[int]  # ids of the annotators who submitted the item, in order of submission
    disputed: Sequence[str]  # keys of the questions not settled yet
    in_discussion: bool  # the item's status is "in discussion"
    discussion_open: bool  # the item has a discussion thread and it is open


@dataclass(frozen=True)
class DiscussionVisibility:
    """What one viewer may see of one item's labels and discussion.

    ``questions`` is None for moderators (every question) or the disputed question keys; ``names`` maps each
    annotator of the item to the name shown; ``full`` (moderators) adds usernames, times and decisions.
    """

    viewer_id: int | None
    full: bool
    questions: tuple[str, ...] | None
    names: Mapping[int, str]
    may_comment: bool
    may_revise: bool

    def shows_question(self, key: str) -> bool:
        return self.questions is None or key in self.questions

    def is_viewer(self, user_id: int) -> bool:
        return self.viewer_id is not None and user_id == self.viewer_id


def pseudonyms(annotators: Sequence[int]) -> dict[int, str]:
    """ "Annotator 1…N" in the given order (submission order for an item: stable whoever looks)."""
    names: dict[int, str] = {}
    for annotator_id in annotators:
        names.setdefault(annotator_id, f"Annotator {len(names) + 1}")
    return names


def discussion_visibility(
    *, viewer_id: int, viewer_is_moderator: bool, facts: ItemFacts
) -> DiscussionVisibility | None:
    """The viewer's view of the item's labels and discussion, or None when they may see none of it."""
    names = pseudonyms(facts.annotators)
    if viewer_is_moderator:
        return DiscussionVisibility(
            viewer_id=viewer_id,
            full=True,
            questions=None,
            names=names,
            may_comment=facts.discussion_open,
            may_revise=facts.discussion_open and viewer_id in names,
        )
    open_discussion = (
        facts.discussion_policy
        and len(names) >= facts.overlap
        and viewer_id in names
        and facts.in_discussion
        and facts.discussion_open
        and bool(facts.disputed)
    )
    if not open_discussion:
        return None
    return DiscussionVisibility(
        viewer_id=viewer_id,
        full=False,
        questions=tuple(facts.disputed),
        names=names,
        may_comment=True,
        may_revise=True,
    )


def author_name(visibility: DiscussionVisibility, *, author_id: int, username: str, author_is_moderator: bool) -> str:
    """The name a comment's author is shown under: usernames for moderators only; to annotators, the
    author's pseudonym on this item, "Adjudicator" for a moderator, otherwise "Another annotator"."""
    if visibility.full:
        return username
    if author_id in visibility.names:
        return visibility.names[author_id]
    return MODERATOR_NAME if author_is_moderator else OTHER_NAME


@dataclass(frozen=True)
class ThreadNames:
    """Names of a norming thread's authors as an annotator sees them (moderators see usernames)."""

    full: bool
    viewer_id: int | None
    names: Mapping[int, str]


def norming_thread_names(*, viewer_id: int, viewer_is_moderator: bool, authors: Iterable[int]) -> ThreadNames:
    """Annotators in a norming thread are "Annotator k" in order of their first comment (moderators keep
    "Adjudicator"): other annotators' identities are no part of norming."""
    return ThreadNames(full=viewer_is_moderator, viewer_id=viewer_id, names=pseudonyms(list(authors)))


def norming_author_name(names: ThreadNames, *, author_id: int, username: str, author_is_moderator: bool) -> str:
    if names.full:
        return username
    if author_is_moderator:
        return MODERATOR_NAME
    return names.names.get(author_id, OTHER_NAME)
