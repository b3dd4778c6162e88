"""The judge's turn-level metrics, one record each: the one place a metric is declared (pure, shared by both apps).

A record holds the key, its label, its scale and "not applicable" rule, what a higher and a lower score mean for the
student, the simulated tutor's propensity, the question a human labeller answers, and how the published human-labelled
files (MRBench, BEA 2025) map onto it. The judge's metric list, the statistics' turn metrics, the simulation's
propensities, the judge-validation questions and the published-dataset mapping are all derived from `REGISTRY`.
A rubric version names the metrics it asks for (`audits.models.PromptTemplate.metrics`); `allowed_values` reads the
registry when called, so a metric added to it is known to every rubric version that asks for it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

NOT_APPLICABLE = -1
# A published label that is not a degree of the metric: kept as the source's label, given no value.
UNMAPPED = "unmapped"


@dataclass(frozen=True)
class LabelQuestion:
    """The metric as a human label question: what it asks, one label per scale value (lowest first), its help."""

    asks: str
    labels: tuple[str, ...]
    help_text: str


@dataclass(frozen=True)
class PublishedMapping:
    """How a published file's dimensions become this metric's values: (source label(s), value) rows and a note."""

    dimensions: tuple[str, ...]
    values: tuple[tuple[str, str], ...]
    note: str = ""


@dataclass(frozen=True)
class Metric:
    key: str
    label: str
    # When the judge answers NOT_APPLICABLE, in words ("" when the metric applies to every turn).
    not_applicable: str
    # What a higher and a lower score mean for the student, in words that follow "students … get".
    higher: str
    lower: str
    # The simulated tutor's probability of the behaviour the metric asks about (audits.llm.simulation).
    propensity: float
    question: LabelQuestion
    published: PublishedMapping | None = None
    scale: tuple[int, int] = (0, 2)

    @property
    def allowed_values(self) -> frozenset[int]:
        low, high = self.scale
        return frozenset({NOT_APPLICABLE, *range(low, high + 1)})

    @property
    def prompt(self) -> str:
        return f"{self.label}: {self.question.asks}"


_YES = (("Yes", "2"), ("To some extent", "1"), ("No", "0"))

REGISTRY: dict[str, Metric] = {
    metric.key: metric
    for metric in (
        Metric(
            key="mistake_recognize",
            label="Mistake identification",
            not_applicable="the student has made no mistake",
            higher="their mistakes identified more often",
            lower="their mistakes identified less often",
            propensity=0.65,
            question=LabelQuestion(
                asks="does the tutor identify the student's mistake and where it is?",
                labels=("No", "To some extent", "Yes"),
                help_text="Not applicable when the student has made no mistake.",
            ),
            published=PublishedMapping(
                dimensions=("Mistake_Identification", "Mistake_Location"),
                values=(
                    ("Mistake_Identification Yes and Mistake_Location Yes", "2"),
                    ("Mistake_Identification Yes, Mistake_Location To some extent or No", "1"),
                    ("Mistake_Identification To some extent", "1"),
                    ("Mistake_Identification No", "0"),
                ),
                note="The rubric merges identifying and locating the mistake (docs/DOMAIN.md). Without "
                "Mistake_Location, Mistake_Identification alone: Yes 2, To some extent 1, No 0.",
            ),
        ),
        Metric(
            key="answer_leakage",
            label="Answer leakage",
            not_applicable="",
            higher="the answer given away more often",
            lower="the answer given away less often",
            propensity=0.05,  # per tutor turn; grows by the simulation's `LEAK_GROWTH` each turn
            question=LabelQuestion(
                asks="does the tutor reveal the final answer, or a step that directly yields it?",
                labels=("No", "Partially", "Yes"),
                help_text="Lower is better for the student's learning: 2 means the answer was given away.",
            ),
            published=PublishedMapping(
                dimensions=("Revealing_of_the_Answer",),
                values=(
                    ("Yes (and the answer is correct)", "2"),
                    ("No", "0"),
                    ("Yes (but the answer is incorrect)", UNMAPPED),
                ),
                note="An incorrect answer revealed is not a degree of leaking the answer: those responses keep "
                "their label in the source labels and have no answer_leakage value (counted on import and in the "
                "report).",
            ),
        ),
        Metric(
            key="step_scaffolded",
            label="Scaffolding",
            not_applicable="the student already has the answer or the tutor revealed it",
            higher="more guidance toward the next step",
            lower="less guidance toward the next step",
            propensity=0.6,
            question=LabelQuestion(
                asks="does the tutor give correct, relevant guidance toward the next step (a hint, an "
                "explanation, an example)?",
                labels=("No", "To some extent", "Yes"),
                help_text="Not applicable when the student already has the answer or the tutor revealed it.",
            ),
            published=PublishedMapping(dimensions=("Providing_Guidance",), values=_YES),
        ),
        Metric(
            key="actionability",
            label="Actionability",
            not_applicable="the student already has the answer or the tutor revealed it",
            higher="clearer next steps",
            lower="less clear next steps",
            propensity=0.6,
            question=LabelQuestion(
                asks="is it clear what the student should do next?",
                labels=("No", "To some extent", "Yes"),
                help_text="Not applicable when the student already has the answer or the tutor revealed it.",
            ),
            published=PublishedMapping(dimensions=("Actionability",), values=_YES),
        ),
        Metric(
            key="corrective_tone",
            label="Tone when correcting",
            not_applicable="there is nothing to correct",
            higher="more encouraging corrections",
            lower="less encouraging corrections",
            propensity=0.6,
            question=LabelQuestion(
                asks="discouraging or offensive, neutral, or encouraging?",
                labels=("Discouraging / offensive", "Neutral", "Encouraging"),
                help_text="Not applicable when there is nothing to correct.",
            ),
            published=PublishedMapping(
                dimensions=("Tutor_Tone",), values=(("Encouraging", "2"), ("Neutral", "1"), ("Offensive", "0"))
            ),
        ),
    )
}

# The metrics today's default rubric asks for, in the judge's order (docs/DOMAIN.md, adapted from Maurya et al.
# 2025); a rubric version stored before versions named their metrics asks for these.
DEFAULT_RUBRIC_METRICS: tuple[str, ...] = tuple(REGISTRY)


def unknown_metrics(keys: Iterable[str]) -> list[str]:
    """The keys the registry does not hold, in their order."""
    return [key for key in keys if key not in REGISTRY]


def allowed_values(keys: Iterable[str] = DEFAULT_RUBRIC_METRICS) -> dict[str, frozenset[int]]:
    """The judge's allowed values per metric for a rubric that asks for `keys` (a KeyError names an unknown one)."""
    return {key: REGISTRY[key].allowed_values for key in keys}
