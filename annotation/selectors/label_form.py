"""The label form's questions, as every door (the pages and the API) shows them.

The doors are the pages' form and the API's next-item answers; a question shows its choices with their keys, Unsure
where the stage and question allow it, Not applicable."""

from __future__ import annotations

from annotation.models import Stage
from annotation.workflow.answers import NOT_APPLICABLE
from annotation.workflow.choice_keys import choices_with_keys


def label_form_questions(stage: Stage) -> list[dict]:
    """The stage's questions as the label form renders them: choices with keys, Unsure, Not applicable."""
    rows = []
    for question in stage.questions.all():
        # Keys derived from the values, whatever an older question stored (see workflow.choice_keys).
        choices = choices_with_keys(question.choices)
        if question.allow_not_applicable:
            choices.append({"value": NOT_APPLICABLE, "label": "Not applicable", "key": "n"})
        rows.append(
            {
                "key": question.key,
                "prompt": question.prompt,
                "help_text": question.help_text,
                "choices": choices,
                "allow_unsure": question.allow_unsure and stage.unsure_enabled,
                "justify_values": ",".join(question.justification_required_for),
                "about_turn": question.about_turn,
            }
        )
    return rows


def stage_question_keys(stage: Stage) -> list[str]:
    """The keys of the stage's questions, the answers a submitted form is read for."""
    return [question.key for question in stage.questions.all()]
