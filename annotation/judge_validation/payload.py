"""What an annotator sees of one tutor turn, pure: the problem and the dialogue, with the persona cue redacted.

The dialogue runs up to and including the turn (highlighted), and it shows no persona cue unless the project shows it.

Hiding the cue lets humans judge pedagogy, not demographics. The cue reaches a transcript in two ways: the
simulated (or real) student introduces itself with its persona statement or name, and a tutor may address
the student by name. Both are redacted here by exact text: the persona statement as written in the
condition, the part of it the student quotes, and the name as a whole word. A real student model that
paraphrases its persona cannot be caught by exact text; the project page says so.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

PERSONA_HIDDEN = "[persona cue hidden]"
NAME_HIDDEN = "[student]"


@dataclass(frozen=True)
class PersonaCue:
    """The strings that reveal who the student is in one condition (empty strings are ignored)."""

    statements: tuple[str, ...] = ()  # persona statement, the quoted self-description…
    name: str = ""


def redact(text: str, cue: PersonaCue) -> str:
    """``text`` with every statement of the cue and the student's name replaced by neutral markers."""
    redacted = text or ""
    # Longest first, so a statement that contains a shorter one is removed whole.
    for statement in sorted({s.strip() for s in cue.statements if s and s.strip()}, key=len, reverse=True):
        redacted = re.sub(re.escape(statement), PERSONA_HIDDEN, redacted, flags=re.IGNORECASE)
    if cue.name.strip():
        redacted = re.sub(rf"(?<!\w){re.escape(cue.name.strip())}(?!\w)", NAME_HIDDEN, redacted, flags=re.IGNORECASE)
    return redacted


def turn_payload(
    *,
    problem: str,
    turns: Sequence[tuple[str, str]],
    highlight: int,
    cue: PersonaCue | None,
    hide_persona_cue: bool,
) -> dict:
    """The item payload (`annotation.models.Item.payload`): the problem, the turns up to and including the
    judged one, and the index of the judged turn. ``turns`` are (role, text) in dialogue order."""
    if highlight < 0 or highlight >= len(turns):
        raise ValueError(f"turn {highlight} is not in a dialogue of {len(turns)} turns")
    shown = []
    for role, text in turns[: highlight + 1]:
        shown.append({"role": role, "text": redact(text, cue) if hide_persona_cue and cue else text})
    return {"text": f"Problem: {problem}", "turns": shown, "highlight": highlight}
