"""When an annotator may revise a main label they submitted — the pure rule behind `services.labelling`'s
`label_revise`. No Django here.

A revision is allowed while the item is not settled and the others' answers are still unseen by its
annotators, so that the revised label is still a pre-discussion label:

- the item is not resolved, and the changed question has no final value yet (unanimous, majority or a
  reviewer's decision);
- no discussion of the item has opened (once it has, its annotators can read each other's answers: a
  change then belongs to the post-discussion round, kept apart);
- within the stage's revision window: at most ``window_minutes`` after the item was submitted, and the item
  is among the annotator's last ``recent_items`` submitted items.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta


@dataclass(frozen=True)
class RevisionState:
    """What the rule reads about one submitted item of one annotator."""

    resolved: bool  # the item as a whole is settled
    settled_questions: frozenset[str]  # question keys with a final value already
    discussion_opened: bool
    submitted_at: datetime
    recent_rank: int  # 0 for the annotator's latest submitted item in the stage, 1 for the one before, …


@dataclass(frozen=True)
class RevisionWindow:
    minutes: int
    items: int


def revision_refusal(
    state: RevisionState, window: RevisionWindow, *, now: datetime, changed: frozenset[str] | None = None
) -> str | None:
    """Why the item's labels cannot be revised now (``changed``: the question keys that would change;
    None asks whether anything could be revised), or None when they can."""
    if state.resolved:
        return "This item is already settled; its labels can no longer be revised."
    if state.discussion_opened:
        return (
            "This item's discussion has opened; give your changed answer in the discussion "
            "(it is kept apart from your first answer)."
        )
    if window.minutes <= 0 or window.items <= 0:
        return "This stage does not allow revising labels."
    if now - state.submitted_at > timedelta(minutes=window.minutes):
        return f"Labels can be revised for {window.minutes} minutes after submitting; that time has passed."
    if state.recent_rank >= window.items:
        return f"Only your last {window.items} submitted items can be revised."
    settled = sorted((changed if changed is not None else frozenset()) & state.settled_questions)
    if settled:
        return "Already settled, no longer revisable: " + ", ".join(settled) + "."
    return None
