"""Which turn of a dialogue item is highlighted (pure): the turn its question is about, the student's or the tutor's.

A question says what it judges (`LabelQuestion.about_turn`): the student's question (the dialogue's first student
turn), the tutor's turn (the item's own highlighted turn when it is the tutor's, else the last tutor turn before it),
or, left empty, whatever turn the item highlights. The demo builds its items' highlight with the same rule."""

from __future__ import annotations

from collections.abc import Iterable

STUDENT = "student"
TUTOR = "tutor"
# The role names a source may give each side of a dialogue.
ROLE_NAMES = {STUDENT: ("student", "user", "learner"), TUTOR: ("tutor", "assistant", "teacher")}


def _is(turn, about: str) -> bool:
    return isinstance(turn, dict) and str(turn.get("role", "")).strip().lower() in ROLE_NAMES[about]


def focused_turn(payload: dict | None, about: str = "") -> int | None:
    """The index of the turn to highlight for a question about ``about`` ('' : the item's own highlight); None
    when the item has no such turn."""
    payload = payload or {}
    turns = payload.get("turns") or []
    highlight = payload.get("highlight")
    own = highlight if isinstance(highlight, int) and not isinstance(highlight, bool) else None
    own = own if own is not None and 0 <= own < len(turns) else None
    if about == STUDENT:
        return next((n for n, turn in enumerate(turns) if _is(turn, STUDENT)), own)
    if about == TUTOR:
        last = own if own is not None else len(turns) - 1
        return next((n for n in range(last, -1, -1) if _is(turns[n], TUTOR)), own)
    return own


def questions_focus(abouts: Iterable[str]) -> str:
    """What the questions asked together are about: their one shared answer, else '' (the item's own highlight)."""
    seen = set(abouts)
    return seen.pop() if len(seen) == 1 else ""
