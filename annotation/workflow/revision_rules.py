"""The pure rule for when an annotator may revise a main label they submitted.

It is the rule behind `services.labelling`'s `label_revise`. No Django here.

A revised label must still be a blind, pre-discussion label. So an item's labels can be revised only while
the item is still waiting for its N labels: once the last one is in, the item is settled, opens a
discussion or waits for a reviewer, and each of these tells its annotators whether the others agreed (in
a two-annotator majority stage, "waiting for a reviewer" even says what the other answered). A change
after that belongs to the discussion, where it is kept apart as a post-discussion answer. The refusal
says the same thing whatever the outcome, so it tells nothing either.

Within that, the stage's revision window: at most ``minutes`` after the item was submitted, and only the
annotator's last ``items`` submitted items.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

COMPLETE = (
    "This item has all its labels now, so they can no longer be revised (a change would no longer be blind). "
    "If a discussion of it opens, you can give a changed answer there."
)


@dataclass(frozen=True)
class RevisionState:
    """What the rule reads about one submitted item of one annotator."""

    complete: bool  # the item has its N labels (settled, in discussion or waiting for a reviewer)
    submitted_at: datetime
    recent_rank: int  # 0 for the annotator's latest submitted item in the stage, 1 for the one before, …


@dataclass(frozen=True)
class RevisionWindow:
    minutes: int
    items: int


def revision_refusal(state: RevisionState, window: RevisionWindow, *, now: datetime) -> str | None:
    """Why the item's labels cannot be revised now, or None when they can."""
    if state.complete:
        return COMPLETE
    if window.minutes <= 0 or window.items <= 0:
        return "This stage does not allow revising labels."
    if now - state.submitted_at > timedelta(minutes=window.minutes):
        return f"Labels can be revised for {window.minutes} minutes after submitting; that time has passed."
    if state.recent_rank >= window.items:
        return f"Only your last {window.items} submitted items can be revised."
    return None
