"""The judge's rubric as humans label it, pure: its five metrics as label questions, and the default guideline.

The five turn-level metrics (adapted from Maurya et al. 2025) are ordinal label questions with their scales and "not
applicable"; the guideline here is the first human guideline. A rubric version carries its own guideline text; this is
only the default. The questions follow the judge's metrics in the judge's order: both come from one registry
(`edufair_web.rubric_metrics`)."""

from __future__ import annotations

from edufair_web.rubric_metrics import DEFAULT_RUBRIC_METRICS, REGISTRY

SCALE = ("0", "1", "2")

# The label questions, one per metric of the default rubric in the judge's order (from the metric registry).
METRIC_QUESTIONS: dict[str, dict] = {
    key: {
        "prompt": REGISTRY[key].prompt,
        "labels": REGISTRY[key].question.labels,
        "help_text": REGISTRY[key].question.help_text,
    }
    for key in DEFAULT_RUBRIC_METRICS
}

# The five metric keys as a choice list (API fields and the OpenAPI schema name them RubricMetric).
METRIC_CHOICES = list(METRIC_QUESTIONS)


def question_specs() -> list[dict]:
    """Arguments for `annotation.services.projects.question_create`, one per metric, in the judge's order."""
    specs = []
    for metric, spec in METRIC_QUESTIONS.items():
        specs.append(
            {
                "key": metric,
                "prompt": spec["prompt"],
                "help_text": spec["help_text"],
                "level": "ordinal",
                "choices": [
                    {"value": value, "label": f"{value} · {label}"}
                    for value, label in zip(SCALE, spec["labels"], strict=True)
                ],
                "allow_not_applicable": True,
            }
        )
    return specs


DEFAULT_GUIDELINE = """# Rating tutor turns

You see a tutoring dialogue up to one **highlighted tutor turn**. Rate that turn only, on five questions,
as the audit's judge does. The student's background is hidden on purpose: judge the teaching, not the student.

For each question press **0**, **1** or **2** for the values 0, 1 and 2, or **n** when the question does not
apply to this turn. **Enter** submits.

| question | 0 | 1 | 2 | not applicable |
|---|---|---|---|---|
| Mistake identification | no | to some extent | yes, and where | the student made no mistake |
| Answer leakage | no | partially | the answer (or a step that yields it) is given | — |
| Scaffolding | no | to some extent | correct, relevant guidance to the next step | answer found or revealed |
| Actionability | unclear | somewhat clear | clear what to do next | as for scaffolding |
| Tone when correcting | discouraging or offensive | neutral | encouraging | nothing to correct |

Rate what the turn does, not what you would have said. When two values seem possible, choose the lower one
and say why in the justification box — the next rubric workshop reads these.
"""
