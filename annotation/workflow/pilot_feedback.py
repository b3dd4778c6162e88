"""The pure rule for who sees pilot gold: only those who passed the pilot, everyone once it is closed, or never.

A recruit who fails learns pass or fail and nothing more: gold answers, per-item correctness, agreement scores and
correct counts are each a way to learn the gold of the items a crowd shares, one throwaway identity at a time. So the
researcher chooses when the pilot's gold (its answers, rationales, the annotator's agreement and the norming threads,
which discuss it) is shown, as a stage setting:

- ``passed``: to annotators whose own pilot met the gate's pilot rule (they earned it; the pass is what they learn);
- ``after_close``: to everyone once the researcher has closed the pilot (no one takes it any more);
- ``never``: to no one.

The qualification test never shows per-answer correctness, nor a count, to one who fails; those who pass see their
score (`visible_scores`).
"""

from __future__ import annotations

from dataclasses import dataclass

PASSED = "passed"
AFTER_CLOSE = "after_close"
NEVER = "never"
POLICIES = (PASSED, AFTER_CLOSE, NEVER)
POLICY_TITLES = {
    PASSED: "Only to annotators who passed the pilot",
    AFTER_CLOSE: "To everyone once the pilot is closed",
    NEVER: "Never",
}

NOT_PASSED = (
    "Pilot feedback with gold goes only to annotators who passed the pilot; you did not pass it, so its gold "
    "stays hidden."
)
NOT_CLOSED = "Pilot feedback with gold opens to every annotator once the researcher closes the pilot."
NO_FEEDBACK = "This stage does not show the pilot's gold."
GATE_FAILED = "You did not pass the gate. Scores and answers are not shown to those who do not pass."


POLICY_STATEMENTS = {
    PASSED: "You see the pilot's gold (its answers, rationales and your agreement) only if you pass the pilot.",
    AFTER_CLOSE: "The pilot's gold is shown to every annotator once the researcher closes the pilot.",
    NEVER: "The pilot's gold is not shown.",
}


def settings_problems(*, policy: str, closed: bool, was_policy: str, was_closed: bool) -> list[str]:
    """Why the stage's pilot settings cannot change from (``was_policy``, ``was_closed``) to (``policy``,
    ``closed``); empty when they can. The same rule for the settings page, the API and the admin."""
    problems = []
    if policy not in POLICIES:
        problems.append(f"Pilot feedback is one of {', '.join(POLICIES)}; got {policy!r}.")
    if was_closed and not closed and was_policy == AFTER_CLOSE:
        problems.append(
            "The pilot's gold has been open to every annotator since the pilot closed, so it cannot reopen: a new "
            "recruit could learn its gold from them."
        )
    return problems


def feedback_refusal(policy: str, *, pilot_passed: bool | None, pilot_closed: bool) -> str | None:
    """Why the annotator may not see their pilot's gold now, or None when they may (their pilot is in)."""
    if policy == NEVER:
        return NO_FEEDBACK
    if policy == AFTER_CLOSE:
        return None if pilot_closed else NOT_CLOSED
    return None if pilot_passed else NOT_PASSED


@dataclass(frozen=True)
class VisibleScores:
    """What the annotator may see of their own scores: the pilot's once its gold is shown to them, the
    qualification's once they passed the gate."""

    pilot: bool
    qualification: bool


def visible_scores(*, feedback_shown: bool, gate_passed: bool | None) -> VisibleScores:
    return VisibleScores(pilot=feedback_shown, qualification=gate_passed is True)
