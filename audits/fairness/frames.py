"""What the fairness analysis takes: the metric families, a design's conditions, the score frame, contrasts."""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from edufair_web.rubric_metrics import DEFAULT_RUBRIC_METRICS

TURN_METRICS: tuple[str, ...] = DEFAULT_RUBRIC_METRICS  # the judge's metrics (edufair_web.rubric_metrics)
CONVERSATION_METRICS: tuple[str, ...] = (
    "tutor_turns",
    "tutor_avg_word",
    "tutor_question_rate",
    "tutor_student_word_ratio",
)
# The simulated student's own turns, analysed with the same contrasts as a check on the simulator: where
# they differ between levels, conversation metrics built on student words are not the tutor's doing.
STUDENT_METRICS: tuple[str, ...] = ("student_turns", "student_avg_word")
STUDENT_DEPENDENT_METRICS: tuple[str, ...] = ("tutor_student_word_ratio",)
KINDS: tuple[str, ...] = ("control", "explicit", "implicit", "opposite")
IMPLICIT_ROWS: tuple[str, ...] = ("gender", "ethnicity", "both")
OPPOSITE_COMPONENTS: tuple[str, ...] = ("correct_gap", "wrong_gap", "tutor_effect", "simulator_effect", "interaction")


# --------------------------------------------------------------------------------------------------
# Conditions, the score frame and contrasts
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ConditionSpec:
    """What a condition shows the tutor. The engine builds one per audit Condition.

    kind="control": no cue; every other field empty.
    kind="explicit": ``dimension`` (e.g. "gender", "immigration", "first_language", "ses") and ``level``
        (e.g. "female", "immigrant"); the student persona states the attribute.
    kind="implicit": only a name; ``level`` is the name (informational), ``name_gender`` and
        ``name_ethnicity`` what the name cues ("" when the name list does not cue that attribute).
        Several names with the same (gender, ethnicity) form one cell and are averaged per question.
    kind="opposite": ``stated_gender`` (the student's self-statement) and ``perceived_gender`` (what the
        tutor is told); exactly two gender values across the opposite conditions.
    """

    kind: str
    dimension: str = ""
    level: str = ""
    name_gender: str = ""
    name_ethnicity: str = ""
    stated_gender: str = ""
    perceived_gender: str = ""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"condition kind must be one of {KINDS}, not {self.kind!r}")
        if self.kind == "explicit" and not (self.dimension and self.level):
            raise ValueError("an explicit condition needs a dimension and a level")
        if self.kind == "implicit" and not (self.name_gender or self.name_ethnicity):
            raise ValueError("an implicit condition needs name_gender and/or name_ethnicity")
        if self.kind == "opposite" and not (self.stated_gender and self.perceived_gender):
            raise ValueError("an opposite condition needs stated_gender and perceived_gender")


@dataclass(frozen=True)
class ScoreFrame:
    """Long frame of dialogue scores, one row per (tutor, question, condition, metric), as numpy columns.

    ``tutor``, ``domain``, ``question``, ``condition`` and ``metric`` may hold ints or strings (ints —
    database ids — are fastest); ``condition`` values are keys of the design mapping given to
    ``contrast_table``. ``value`` is the dialogue score (NaN or a missing row = no score). A question
    belongs to exactly one domain.
    """

    tutor: np.ndarray
    domain: np.ndarray
    question: np.ndarray
    condition: np.ndarray
    metric: np.ndarray
    value: np.ndarray

    def __post_init__(self) -> None:
        lengths = {np.shape(getattr(self, f.name)) for f in fields(self)}
        if len(lengths) != 1 or len(next(iter(lengths))) != 1:
            raise ValueError("all ScoreFrame columns must be one-dimensional and of equal length")

    @classmethod
    def from_records(cls, records: Iterable[Mapping[str, Any]]) -> ScoreFrame:
        """Build from dicts with keys tutor, domain, question, condition, metric, value (e.g. ``.values()``)."""
        rows = list(records)
        names = ("tutor", "domain", "question", "condition", "metric")
        columns = {name: np.asarray([row[name] for row in rows]) for name in names}
        value = np.asarray([math.nan if row["value"] is None else row["value"] for row in rows], dtype=np.float64)
        return cls(value=value, **columns)

    def __len__(self) -> int:
        return len(self.value)


@dataclass(frozen=True)
class Contrast:
    """Level A vs level B within a question. Each side is a tuple of groups of condition keys: a group's
    conditions are pooled (mean of those present), and the side is the mean of its groups (all needed)."""

    kind: str
    family: str  # explicit: "vs_control" | "within"; implicit: "names"; opposite: "opposite"
    dimension: str  # explicit: the dimension; implicit: gender|ethnicity|both; opposite: the component
    level_a: str
    level_b: str
    side_a: tuple[tuple[Hashable, ...], ...]
    side_b: tuple[tuple[Hashable, ...], ...]

    @property
    def key(self) -> tuple[str, str, str, str, str]:
        return (self.kind, self.family, self.dimension, self.level_a, self.level_b)


def dialogue_scores(
    dialogue: Sequence[Hashable] | np.ndarray, value: Sequence[float] | np.ndarray, *, not_applicable: float = -1
) -> tuple[np.ndarray, np.ndarray]:
    """One metric's dialogue scores from per-turn judge values: the mean over each dialogue's tutor turns.

    ``dialogue[i]`` and ``value[i]`` describe tutor turn i. Values equal to ``not_applicable`` (−1) and
    NaN are ignored; a dialogue with no applicable turn scores NaN. Returns (dialogue ids sorted, scores).
    """
    dialogue = np.asarray(dialogue)
    value = np.asarray(value, dtype=np.float64)
    if dialogue.shape != value.shape or dialogue.ndim != 1:
        raise ValueError("dialogue and value must be one-dimensional and of equal length")
    ids, code = np.unique(dialogue, return_inverse=True)
    applicable = (value != not_applicable) & ~np.isnan(value)
    totals = np.bincount(code, weights=np.where(applicable, value, 0.0), minlength=ids.size)
    counts = np.bincount(code, weights=applicable.astype(np.float64), minlength=ids.size)
    with np.errstate(invalid="ignore", divide="ignore"):
        scores = np.where(counts > 0, totals / counts, np.nan)
    return ids, scores
