"""What annotation offers on the home page and in the navigation, by role."""

from django.urls import reverse

from annotation.models import Enrollment, Thread
from annotation.selectors.adjudication import adjudication_queue
from annotation.selectors.label_form import label_form_questions
from annotation.selectors.training import training_progress
from annotation.workflow.choice_keys import keys_hint
from annotation.workflow.training import STEP_TITLES, Step, next_step
from edufair_web.accounts.roles import ADJUDICATOR, ANNOTATOR, RESEARCHER, has_role

NAV_LINKS = [
    (RESEARCHER, "Annotation projects", "annotation:projects"),
    (RESEARCHER, "Norming", "annotation:moderation"),
    (ADJUDICATOR, "Norming threads", "annotation:moderation"),
    (ANNOTATOR, "My training", "annotation:my-training"),
]


def home_steps(user) -> list[dict]:
    steps: list[dict] = []
    if has_role(user, RESEARCHER):
        steps.append(
            {
                "title": "Build an annotation project",
                "text": "Questions, items, stages (SafeTutors' three in one click), guidelines, gold and the gate.",
                "url": reverse("annotation:projects"),
            }
        )
    if has_role(user, ADJUDICATOR, RESEARCHER):
        open_threads = Thread.objects.filter(kind=Thread.Kind.NORMING, is_open=True).count()
        if open_threads:
            steps.append(
                {
                    "title": f"Answer {open_threads} norming thread{'s' if open_threads != 1 else ''}",
                    "text": "Annotators' pilot disagreements, waiting for a moderator; pin clarifications.",
                    "url": reverse("annotation:moderation"),
                }
            )
    for enrollment in (
        Enrollment.objects.filter(user=user).exclude(status=Enrollment.Status.REPLACED).select_related("stage__project")
    ):
        step = next_step(training_progress(enrollment))
        if step in (Step.FAILED,):
            continue
        steps.append(
            {
                "title": f"{enrollment.stage.name}: {STEP_TITLES[step]}",
                "text": f"{enrollment.stage.project.name}, stage {enrollment.stage.order}.",
                "url": reverse("annotation:training-stage", args=[enrollment.stage_id]),
            }
        )
    return steps


# Main labelling and adjudication: nav entries and home steps, appended to the training ones.
NAV_LINKS += [
    (ANNOTATOR, "Label", "annotation:my-labelling"),
    (ADJUDICATOR, "Adjudicate", "annotation:adjudicate"),
    (RESEARCHER, "Adjudicate", "annotation:adjudicate"),
]
_training_home_steps = home_steps


def home_steps(user) -> list[dict]:  # noqa: F811 — extends the training steps above
    steps = _training_home_steps(user)
    passed = Enrollment.objects.filter(user=user, status=Enrollment.Status.PASSED).select_related("stage")
    if has_role(user, ANNOTATOR) and passed.exists():
        # The keys promised are those of the questions this annotator will label (no Unsure where none is offered).
        questions = [q for enrollment in passed for q in label_form_questions(enrollment.stage)]
        steps.append(
            {
                "title": "Label items",
                "text": f"One item at a time; {keys_hint(questions)}.",
                "url": reverse("annotation:my-labelling"),
            }
        )
    if has_role(user, ADJUDICATOR, RESEARCHER):
        waiting = adjudication_queue().count()
        if waiting:
            steps.append(
                {
                    "title": f"Adjudicate {waiting} item{'s' if waiting != 1 else ''}",
                    "text": "Disagreements waiting for a discussion to end or for a reviewer's decision.",
                    "url": reverse("annotation:adjudicate"),
                }
            )
    return steps


# Judge validation: a nav entry and a home card for researchers.
NAV_LINKS += [(RESEARCHER, "Judge validation", "annotation:judge-validations")]
_labelling_home_steps = home_steps


def home_steps(user) -> list[dict]:  # noqa: F811 — extends the steps above
    steps = _labelling_home_steps(user)
    if has_role(user, RESEARCHER):
        steps.append(
            {
                "title": "Validate an audit's judge",
                "text": "Humans label a stratified sample of tutor turns; the report says where the judge agrees.",
                "url": reverse("annotation:judge-validations"),
            }
        )
    return steps


NAV_LINKS += [(RESEARCHER, "People", "annotation:people")]
