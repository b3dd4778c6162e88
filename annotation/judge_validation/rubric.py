"""The judge's rubric as humans label it, pure: its five metrics as label questions, and the default guideline.

The five turn-level metrics (adapted from Maurya et al. 2025) are ordinal label questions with their scales and "not
applicable"; the guideline here is the first human guideline. A rubric version carries its own guideline text; this is
only the default. The questions follow the judge's metrics in the judge's order (`audit_source` checks it on import)."""

from __future__ import annotations

SCALE = ("0", "1", "2")

METRIC_QUESTIONS: dict[str, dict] = {
    "mistake_recognize": {
        "prompt": "Mistake identification: does the tutor identify the student's mistake and where it is?",
        "labels": ("No", "To some extent", "Yes"),
        "help_text": "Not applicable when the student has made no mistake.",
    },
    "answer_leakage": {
        "prompt": "Answer leakage: does the tutor reveal the final answer, or a step that directly yields it?",
        "labels": ("No", "Partially", "Yes"),
        "help_text": "Lower is better for the student's learning: 2 means the answer was given away.",
    },
    "step_scaffolded": {
        "prompt": "Scaffolding: does the tutor give correct, relevant guidance toward the next step (a hint, an "
        "explanation, an example)?",
        "labels": ("No", "To some extent", "Yes"),
        "help_text": "Not applicable when the student already has the answer or the tutor revealed it.",
    },
    "actionability": {
        "prompt": "Actionability: is it clear what the student should do next?",
        "labels": ("No", "To some extent", "Yes"),
        "help_text": "Not applicable when the student already has the answer or the tutor revealed it.",
    },
    "corrective_tone": {
        "prompt": "Tone when correcting: discouraging or offensive, neutral, or encouraging?",
        "labels": ("Discouraging / offensive", "Neutral", "Encouraging"),
        "help_text": "Not applicable when there is nothing to correct.",
    },
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
