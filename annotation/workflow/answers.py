"""Answers to label questions: the `Answer` type, its parsing and the rules it must meet (pure).

An answer is parsed from a form or a JSON body; the rules hold for a submit of any phase and for a post-discussion
answer. No Django here.

The rules read a question through the attributes `annotation.models.LabelQuestion` has (`Question`), so
the services pass their questions as they loaded them and the tests can pass plain objects.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Protocol

# A label value that means "this question does not apply to the item" (the rubric's −1).
NOT_APPLICABLE = "n/a"
# What the label form's Unsure choice posts (a value no question has).
UNSURE_FIELD_VALUE = "__unsure__"
# A single item never takes longer than this of active time; anything above is a clock problem.
MAX_SECONDS_PER_ITEM = 4 * 3600


class Question(Protocol):
    key: str
    allow_unsure: bool
    allow_not_applicable: bool
    justification_required_for: list[str]

    @property
    def values(self) -> list[str]: ...

    def choice_label(self, value: str) -> str: ...


@dataclass(frozen=True)
class Answer:
    """One question's answer: a value, or Unsure (then ``value`` is None), with an optional justification."""

    value: str | None = None
    unsure: bool = False
    justification: str = ""

    @property
    def stored_value(self) -> str:
        """The value as a label stores it: empty for an Unsure answer."""
        return "" if self.unsure else self.value

    @property
    def stored_justification(self) -> str:
        return self.justification.strip()


class LabelInvalid(ValueError):
    """The answers do not fit the stage's questions; ``errors`` maps a question key to what is wrong."""

    def __init__(self, errors: dict[str, str]):
        self.errors = errors
        super().__init__("; ".join(f"{key}: {message}" for key, message in errors.items()))


def answer_from_json(raw: Mapping) -> Answer:
    """An answer as an API body gives it: ``{"value": …, "unsure": …, "justification": …}``, each optional."""
    return Answer(
        value=raw.get("value") or None, unsure=raw.get("unsure", False), justification=raw.get("justification", "")
    )


def answers_from_json(raw: Mapping[str, Mapping]) -> dict[str, Answer]:
    """Question key → `Answer`, from an API body's ``answers`` object."""
    return {key: answer_from_json(answer) for key, answer in raw.items()}


def answer_from_form(choice: str | None, justification: str = "") -> Answer:
    """An answer as the label form posts it: the chosen value (`UNSURE_FIELD_VALUE` for Unsure, empty for
    none) and the justification field."""
    choice = (choice or "").strip()
    return Answer(
        value=None if choice in ("", UNSURE_FIELD_VALUE) else choice,
        unsure=choice == UNSURE_FIELD_VALUE,
        justification=justification,
    )


def active_seconds(value) -> float:
    """The active time a client reported for an item, as stored: 0 to `MAX_SECONDS_PER_ITEM`; a value that
    is not a finite number (NaN, infinity, text) counts as 0 rather than reaching the hours and spend."""
    try:
        seconds = float(value or 0)
    except (TypeError, ValueError):
        return 0.0
    if not math.isfinite(seconds):
        return 0.0
    return min(max(seconds, 0.0), MAX_SECONDS_PER_ITEM)


def answers_validate(
    questions: Iterable[Question], answers: Mapping[str, Answer], *, unsure_enabled: bool
) -> Mapping[str, Answer]:
    """Check every question has one valid answer and no answer is to another question; returns ``answers``.
    ``unsure_enabled``: whether the stage offers Unsure at all. Raises LabelInvalid."""
    errors: dict[str, str] = {}
    questions = list(questions)
    known = {q.key for q in questions}
    for key in answers:
        if key not in known:
            errors[key] = "not a question of this stage"
    for question in questions:
        answer = answers.get(question.key)
        if answer is None or (not answer.unsure and not answer.value):
            errors[question.key] = "an answer is required"
            continue
        if answer.unsure:
            if not (question.allow_unsure and unsure_enabled):
                errors[question.key] = "Unsure is not an option for this question"
            continue
        if answer.value not in question.values:
            allowed = ", ".join(question.values)
            errors[question.key] = f"{answer.value!r} is not one of the choices ({allowed})"
            continue
        if answer.value == NOT_APPLICABLE and not question.allow_not_applicable:
            errors[question.key] = "not applicable is not an option for this question"
        elif answer.value in question.justification_required_for and not answer.justification.strip():
            errors[question.key] = f"the answer {question.choice_label(answer.value)!r} needs a justification"
    if errors:
        raise LabelInvalid(errors)
    return answers


def post_discussion_answers_validate(
    disputed: Mapping[str, Question], answers: Mapping[str, Answer], *, unsure_enabled: bool
) -> None:
    """Check answers given after a discussion: only to ``disputed`` questions (key → question), each a
    valid choice; a disputed question may be left out. Raises LabelInvalid."""
    errors = {}
    for key, answer in answers.items():
        question = disputed.get(key)
        if question is None:
            errors[key] = "not a question under discussion"
        elif answer.unsure:
            if not (question.allow_unsure and unsure_enabled):
                errors[key] = "Unsure is not an option for this question"
        elif answer.value not in question.values:
            errors[key] = f"{answer.value!r} is not one of the choices"
        elif answer.value in question.justification_required_for and not answer.justification.strip():
            errors[key] = f"the answer {question.choice_label(answer.value)!r} needs a justification"
    if errors:
        raise LabelInvalid(errors)
