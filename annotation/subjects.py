"""The subjects a project's items and enrolments may name, and how a subject outside them is refused in words."""

from __future__ import annotations

import difflib
from collections.abc import Sequence

from annotation.presets import SAFETUTORS_SUBJECTS

# Everyday names for a preset subject: refused with the preset's name suggested, never mapped silently.
SUBJECT_ALIASES = {
    "maths": "mathematics",
    "math": "mathematics",
    "mathematic": "mathematics",
    "phys": "physics",
    "chem": "chemistry",
}


def preset_subjects_text(subjects: Sequence[str] = SAFETUTORS_SUBJECTS) -> str:
    """The preset's subjects as a form's help text names them."""
    return ", ".join(subjects)


def subject_suggestion(value: str, subjects: Sequence[str]) -> str:
    """The project subject a refused value most likely means ("" when none is close)."""
    lowered = value.strip().lower()
    by_case = {s.lower(): s for s in subjects}
    if lowered in by_case:
        return by_case[lowered]
    alias = SUBJECT_ALIASES.get(lowered)
    if alias in subjects:
        return alias
    close = difflib.get_close_matches(lowered, list(by_case), n=1, cutoff=0.75)
    return by_case[close[0]] if close else ""


def subject_problem(value: str, subjects: Sequence[str]) -> str:
    """Why ``value`` is not a subject of a project declaring ``subjects``, in a sentence; "" when it is one
    (or when the project declares none, or the value is empty)."""
    if not subjects or not value or value in subjects:
        return ""
    shown = value if len(value) <= 60 else f"{value[:59]}…"
    suggestion = subject_suggestion(value, subjects)
    hint = f"did you mean '{suggestion}'?" if suggestion else f"its subjects are {', '.join(subjects)}."
    return f"'{shown}' is not a subject of this project; {hint}"
