"""The pure rule for when an annotator may revise a main label they submitted, and whether the revision counts.

It is the rule behind `services.labelling`'s `label_revise` and the "my recent items" list. No Django here.

The window is the stage's: at most ``minutes`` after the item was submitted, and only the annotator's last
``items`` submitted items. It is the whole rule for what the annotator is told. Whether the item has all its labels,
is settled, in discussion or waiting for a reviewer changes nothing the annotator sees of their own items: an answer
that changed the moment the last co-annotator submitted ("this item has all its labels now") would tell them when the
others labelled, and for a two-annotator item, together with a discussion that did or did not open, what they
answered.

So within the window a revision is always accepted, in the same words. Whether it counts is decided out of sight:

- while the item still waits for its labels, the revised label replaces the earlier one (kept as its earlier version)
  and is the blind, pre-discussion label agreement and resolution read;
- once the item's resolution has started (it has its N labels: settled, in discussion, or waiting for a reviewer),
  the blind labels already read stay as they are, and the revision is stored beside them as a held revision, not
  counted. Blind labelling stays sound: nothing read after the resolution started (a discussion's answers, a
  reviewer's queue) can change a pre-discussion label; a changed answer after discussion has its own place, the
  discussion's post-discussion answer. The annotator sees their held revision as their latest answer, as for any
  revision; researchers see it in the label's history.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

NO_REVISING = "This stage does not allow revising labels."


@dataclass(frozen=True)
class RevisionState:
    """What the rule reads about one submitted item of one annotator: nothing about the other annotators."""

    submitted_at: datetime
    recent_rank: int  # 0 for the annotator's latest submitted item in the stage, 1 for the one before, …


@dataclass(frozen=True)
class RevisionWindow:
    minutes: int
    items: int


def revision_refusal(state: RevisionState, window: RevisionWindow, *, now: datetime) -> str | None:
    """Why the item's labels cannot be revised now, or None when they can: the window alone decides."""
    if window.minutes <= 0 or window.items <= 0:
        return NO_REVISING
    if now - state.submitted_at > timedelta(minutes=window.minutes):
        return f"Labels can be revised for {window.minutes} minutes after submitting; that time has passed."
    if state.recent_rank >= window.items:
        return f"Only your last {window.items} submitted items can be revised."
    return None


def window_statement(state: RevisionState, window: RevisionWindow, *, now: datetime) -> str:
    """The window in time and position, as the annotator's recent items state it (or why it is over)."""
    refusal = revision_refusal(state, window, now=now)
    if refusal is not None:
        return refusal
    left = timedelta(minutes=window.minutes) - (now - state.submitted_at)
    minutes = max(1, int(left.total_seconds() // 60))
    return (
        f"Revisable for {minutes} more minute{'s' if minutes != 1 else ''}, "
        f"while it is among your last {window.items} submitted items."
    )


def revision_counts(*, resolution_started: bool) -> bool:
    """Whether an accepted revision replaces the blind label (True) or is held beside it (False)."""
    return not resolution_started
