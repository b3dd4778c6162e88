"""What the training and labelling pages share: the label form, and the 403 page for a refused step.

The labelling form's context and parsing (reused by main labelling), and turning a refused training step into a 403
page. The form's questions come from `selectors.label_form`, which the API serves too."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404, render

from annotation.models import Enrollment, Item, Stage
from annotation.selectors.label_form import label_form_questions, stage_question_keys
from annotation.selectors.training import enrollment_of
from annotation.workflow.answers import UNSURE_FIELD_VALUE, Answer, answer_from_form
from annotation.workflow.training import StepRefused
from annotation.workflow.turn_focus import questions_focus


def label_form_context(
    *,
    stage: Stage,
    item: Item,
    action: str,
    errors: dict | None = None,
    submitted: dict | None = None,
    submit_label: str = "Submit",
) -> dict:  # noqa: E501
    """Context for templates/annotation/partials/label_form.html."""
    questions = label_form_questions(stage)
    submitted = submitted or {}
    for question in questions:
        question["error"] = (errors or {}).get(question["key"], "")
        question["selected"] = submitted.get(f"answer-{question['key']}", "")
        question["justification"] = submitted.get(f"justification-{question['key']}", "")
    return {
        "label_item": item,
        "label_questions": questions,
        "label_focus": questions_focus(q["about_turn"] for q in questions),
        "label_action": action,
        "label_submit": submit_label,
        "unsure_value": UNSURE_FIELD_VALUE,
        "label_errors": errors or {},
    }


def answers_from_post(stage: Stage, data) -> tuple[dict[str, Answer], float]:
    answers = {}
    for key in stage_question_keys(stage):
        answers[key] = answer_from_form(data.get(f"answer-{key}"), data.get(f"justification-{key}", ""))
    try:
        seconds = float(data.get("seconds") or 0)
    except ValueError:
        seconds = 0.0
    return answers, seconds


def enrollment_or_403(request, stage_pk: int) -> Enrollment:
    enrollment = enrollment_of(request.user, stage_pk)
    if enrollment is None:
        get_object_or_404(Stage, pk=stage_pk)
        raise PermissionDenied("You are not enrolled in this stage.")
    return enrollment


def refused_response(request, exc: StepRefused, stage: Stage | None = None):
    """A 403 that says which step must come first, with a link back to the stage's next step."""
    return render(request, "annotation/refused.html", {"reason": str(exc), "stage": stage}, status=403)
