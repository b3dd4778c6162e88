"""The one door for submitting labels of any phase.

`any_phase_label_submit` validates an item's answers (`workflow.answers`), enforces the training order for the phase
(pilot, qualification, main), stores them once (a double submit changes nothing) and runs what follows an answer: the
pilot's norming threads, the gate after the last qualification item.

A main label goes on to `services.labelling.main_label_submit` (reservations, resolution of the item), which
accepts it only from an annotator who passed the gate and confirmed the current guideline.
"""

from __future__ import annotations

from django.db import IntegrityError, transaction
from django.utils import timezone

from annotation.models import Assignment, Enrollment, Item, Label, Phase, Stage, TrainingItem
from annotation.selectors.training import pilot_item_ids, training_progress
from annotation.services.labelling import NoAssignment, SubmitResult, main_label_submit
from annotation.services.training import pilot_complete_if_done, qualification_complete_if_done
from annotation.workflow.answers import Answer, active_seconds, answers_validate
from annotation.workflow.training import Action, StepRefused, check_action

PHASE_ACTIONS = {
    Phase.PILOT: Action.LABEL_PILOT,
    Phase.QUALIFICATION: Action.LABEL_QUALIFICATION,
    Phase.MAIN: Action.LABEL_MAIN,
}


def _assignment_for(*, enrollment: Enrollment, item: Item, phase: str) -> Assignment:
    stage, annotator = enrollment.stage, enrollment.user
    if not TrainingItem.objects.filter(stage=stage, item=item, phase=phase).exists():
        raise NoAssignment(f"This item is not part of the stage's {phase}.")
    if phase == Phase.PILOT and item.pk not in pilot_item_ids(enrollment):
        raise NoAssignment("This item is not part of your pilot.")
    assignment, _ = Assignment.objects.get_or_create(
        stage=stage, item=item, annotator=annotator, defaults={"phase": phase}
    )
    if assignment.phase != phase:
        raise NoAssignment(f"This item was given to you as {assignment.phase}, not {phase}.")
    return assignment


def any_phase_label_submit(
    *, annotator, stage: Stage, item: Item, phase: str, answers: dict[str, Answer], seconds: float = 0.0
) -> SubmitResult:
    """Store the annotator's answers to one item in ``phase``. Refuses (StepRefused) anything out of
    training order; raises LabelInvalid (answers) and NoAssignment (not this annotator's item in the phase).

    Main labels have one door, `services.labelling.main_label_submit` (reservations, resolution of the item).
    """
    if phase == Phase.MAIN:
        return main_label_submit(annotator=annotator, stage=stage, item=item, answers=answers, seconds=seconds)
    enrollment = Enrollment.objects.filter(stage=stage, user=annotator).select_related("stage", "user").first()
    if enrollment is None:
        raise StepRefused("You are not enrolled in this stage.")
    check_action(training_progress(enrollment), PHASE_ACTIONS[Phase(phase)])
    answers_validate(stage.questions.all(), answers, unsure_enabled=stage.unsure_enabled)
    seconds = active_seconds(seconds)
    questions = {q.key: q for q in stage.questions.all()}
    try:
        with transaction.atomic():
            assignment = _assignment_for(enrollment=enrollment, item=item, phase=phase)
            if assignment.submitted_at is not None:
                return SubmitResult(assignment=assignment, created=False)
            Label.objects.bulk_create(
                [
                    Label(
                        assignment=assignment,
                        question=questions[key],
                        phase=phase,
                        round=Label.Round.PRE,
                        value=answer.stored_value,
                        unsure=answer.unsure,
                        justification=answer.stored_justification,
                        seconds=seconds,
                    )
                    for key, answer in answers.items()
                ]
            )
            # Compare-and-swap: only the first of two racing submits marks the assignment done.
            claimed = Assignment.objects.filter(pk=assignment.pk, submitted_at__isnull=True).update(
                submitted_at=timezone.now()
            )
            if not claimed:
                raise IntegrityError("assignment already submitted")
            assignment.refresh_from_db()
    except IntegrityError:
        # The same answers arrived twice at once; the first one stands.
        assignment = Assignment.objects.get(stage=stage, item=item, annotator=annotator)
        return SubmitResult(assignment=assignment, created=False)
    _after_submit(enrollment, phase)
    return SubmitResult(assignment=assignment, created=True)


def _after_submit(enrollment: Enrollment, phase: str) -> None:
    if phase == Phase.PILOT:
        pilot_complete_if_done(enrollment)
    elif phase == Phase.QUALIFICATION:
        qualification_complete_if_done(enrollment)
