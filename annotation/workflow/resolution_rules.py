"""What happens to an item once it has its N labels — the pure decision behind `resolution.py`.

Per label question, from the annotators' values (and, after a discussion, their revised values):

- every annotator gave the same value → resolved, method "unanimous";
- stage policy "discussion_senior": otherwise a discussion opens among the item's annotators; afterwards, if the
  revised labels are unanimous → resolved, method "discussion"; otherwise → a senior reviewer decides;
- stage policy "majority_reviewer": a value chosen by more than half of the labels → resolved, method "majority";
  otherwise → the reviewer queue.

"Unsure" (`annotation.agreement.UNSURE`) is an answer, not a value: Unsure labels count in the number of
labels but never towards any value. So unanimous Unsure is not a resolution, and Unsure never joins a
value to make a majority: [A, A, Unsure] has a majority (2 of 3), [A, Unsure, Unsure] does not.

Multi-question items are decided question by question; `resolve_item` also says what the item as a whole
waits for. The senior reviewer's own decision is recorded with `reviewer_decision`. No Django here.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from enum import StrEnum

from annotation.agreement import UNSURE


class Policy(StrEnum):
    """A stage's resolution policy: the values `Stage.resolution_policy` stores (its choices are these)."""

    DISCUSSION_SENIOR = "discussion_senior"  # discussion among the annotators, then a senior reviewer
    MAJORITY_REVIEWER = "majority_reviewer"  # majority vote, then a reviewer when there is none


POLICY_LABELS: dict[Policy, str] = {
    Policy.DISCUSSION_SENIOR: "Discussion, then senior reviewer",
    Policy.MAJORITY_REVIEWER: "Majority, no majority to reviewer",
}
POLICY_CHOICES: list[tuple[str, str]] = [(policy.value, POLICY_LABELS[policy]) for policy in Policy]
POLICIES: tuple[str, ...] = tuple(policy.value for policy in Policy)

# How a final value was reached (the Adjudication.method values).
UNANIMOUS = "unanimous"
MAJORITY = "majority"
DISCUSSION = "discussion"
SENIOR = "senior"

# What the question (or item) needs next.
RESOLVED = "resolved"
AWAIT_LABELS = "await_labels"
OPEN_DISCUSSION = "open_discussion"
SENIOR_REVIEW = "senior_review"
REVIEWER_QUEUE = "reviewer_queue"

# For a whole item, the step that blocks it: labels first, then discussion, then a reviewer.
_ITEM_STEP_PRIORITY = (AWAIT_LABELS, OPEN_DISCUSSION, SENIOR_REVIEW, REVIEWER_QUEUE, RESOLVED)


@dataclass(frozen=True)
class Resolution:
    """The decision for one question: how it was settled and to what, or what it waits for."""

    method: str | None
    final_value: Hashable | None
    next_step: str

    @property
    def is_resolved(self) -> bool:
        return self.next_step == RESOLVED


@dataclass(frozen=True)
class ItemResolution:
    """Per-question decisions for an item, and the step the item as a whole waits for."""

    questions: dict[Hashable, Resolution]

    @property
    def next_step(self) -> str:
        steps = {resolution.next_step for resolution in self.questions.values()}
        return next(step for step in _ITEM_STEP_PRIORITY if step in steps) if steps else AWAIT_LABELS

    @property
    def is_resolved(self) -> bool:
        return self.next_step == RESOLVED

    def questions_needing(self, step: str) -> list[Hashable]:
        """The questions waiting for ``step`` (e.g. which ones the discussion or the reviewer must settle)."""
        return [key for key, resolution in self.questions.items() if resolution.next_step == step]


def resolve_question(
    labels: Mapping[Hashable, Hashable],
    *,
    policy: str,
    required: int,
    after_discussion: Mapping[Hashable, Hashable] | None = None,
) -> Resolution:
    """Decide one question from ``labels`` (annotator → value).

    ``required`` is the stage's overlap N; with fewer labels the question waits. More than N labels are
    all used. ``after_discussion`` (annotator → revised value) is given once the discussion is over; an
    annotator who did not revise keeps their first label, and an empty mapping means nobody revised.
    """
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {POLICIES}, got {policy!r}")
    if required < 1:
        raise ValueError(f"required must be at least 1, got {required}")
    if after_discussion is not None and policy != Policy.DISCUSSION_SENIOR:
        raise ValueError(f"only the {Policy.DISCUSSION_SENIOR.value!r} policy has post-discussion labels")

    if any(value is None for value in labels.values()) or (
        after_discussion is not None and any(value is None for value in after_discussion.values())
    ):
        raise ValueError(f"a label needs a value (an Unsure answer is {UNSURE!r})")

    if len(labels) < required:
        return Resolution(method=None, final_value=None, next_step=AWAIT_LABELS)
    # A unanimous first round is final: revisions during a discussion about other questions do not reopen it.
    agreed = _unanimous_value(labels.values())
    if agreed is not None:
        return Resolution(method=UNANIMOUS, final_value=agreed, next_step=RESOLVED)

    if policy == Policy.MAJORITY_REVIEWER:
        winner = _strict_majority_value(labels.values())
        if winner is not None:
            return Resolution(method=MAJORITY, final_value=winner, next_step=RESOLVED)
        return Resolution(method=None, final_value=None, next_step=REVIEWER_QUEUE)

    if after_discussion is None:
        return Resolution(method=None, final_value=None, next_step=OPEN_DISCUSSION)
    strangers = set(after_discussion) - set(labels)
    if strangers:
        raise ValueError(
            f"post-discussion labels from annotators who did not label the item: {sorted(map(str, strangers))}"
        )
    revised = {**labels, **after_discussion}
    agreed = _unanimous_value(revised.values())
    if agreed is not None:
        return Resolution(method=DISCUSSION, final_value=agreed, next_step=RESOLVED)
    return Resolution(method=None, final_value=None, next_step=SENIOR_REVIEW)


def resolve_item(
    labels_by_question: Mapping[Hashable, Mapping[Hashable, Hashable]],
    *,
    policy: str,
    required: int,
    after_discussion_by_question: Mapping[Hashable, Mapping[Hashable, Hashable]] | None = None,
) -> ItemResolution:
    """Decide every question of an item (question key → annotator → value).

    The discussion is one thread per item, so ``after_discussion_by_question`` is given for the whole
    item once it is over; a question missing from it had no revisions.
    """
    questions = {}
    for key, labels in labels_by_question.items():
        after = None if after_discussion_by_question is None else after_discussion_by_question.get(key, {})
        questions[key] = resolve_question(labels, policy=policy, required=required, after_discussion=after)
    return ItemResolution(questions=questions)


def reviewer_decision(value: Hashable) -> Resolution:
    """The senior reviewer's (or the reviewer queue's) final word on a question."""
    if value is None or value == UNSURE:
        raise ValueError("a reviewer must decide on a value, not Unsure or nothing")
    return Resolution(method=SENIOR, final_value=value, next_step=RESOLVED)


def _unanimous_value(values) -> Hashable | None:
    distinct = set(values)
    if len(distinct) != 1:
        return None
    (value,) = distinct
    return None if value == UNSURE else value


def _strict_majority_value(values) -> Hashable | None:
    values = list(values)
    tally = Counter(value for value in values if value != UNSURE)
    if not tally:
        return None
    value, count = tally.most_common(1)[0]
    # Strictly more than half of all labels, Unsure ones included in the denominator.
    return value if 2 * count > len(values) else None
