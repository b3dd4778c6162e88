"""The training order, pure: guideline → worked examples → pilot → norming → qualification → gate.

`next_step` says where an annotator is; `check_action` refuses anything out of order with a reason the
server returns as 403. Services and views build a `TrainingProgress` from the database and ask here,
so the page and the API enforce exactly the same order. The pilot's gold (its feedback and the norming threads that
discuss it) is shown only as `workflow.pilot_feedback` allows. A new guideline version puts the annotator back
at the guideline step until they confirm it — for every later action, main labelling included.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Step(StrEnum):
    GUIDELINE = "guideline"
    EXAMPLES = "examples"
    PILOT = "pilot"
    NORMING = "norming"
    QUALIFICATION = "qualification"
    PASSED = "passed"
    FAILED = "failed"
    REPLACED = "replaced"
    WAITING = "waiting"  # the researcher has not set up what the next step needs yet


class Action(StrEnum):
    CONFIRM_GUIDELINE = "confirm_guideline"
    VIEW_EXAMPLES = "view_examples"
    LABEL_PILOT = "label_pilot"
    VIEW_PILOT_FEEDBACK = "view_pilot_feedback"
    NORMING = "norming"  # finish the norming step
    READ_NORMING = "read_norming"  # read and post in norming threads (they discuss the pilot's gold)
    LABEL_QUALIFICATION = "label_qualification"
    LABEL_MAIN = "label_main"


STEP_TITLES = {
    Step.GUIDELINE: "Read and confirm the guideline",
    Step.EXAMPLES: "Study the worked examples",
    Step.PILOT: "Label the pilot items",
    Step.NORMING: "Join the norming discussion",
    Step.QUALIFICATION: "Take the qualification test",
    Step.PASSED: "Passed: you can label real items",
    Step.FAILED: "Not passed",
    Step.REPLACED: "Replaced",
    Step.WAITING: "Waiting for the researcher",
}
TRAINING_STEPS = (Step.GUIDELINE, Step.EXAMPLES, Step.PILOT, Step.NORMING, Step.QUALIFICATION)


class StepRefused(Exception):
    """An action out of training order; the message says what must come first."""


@dataclass(frozen=True)
class TrainingProgress:
    current_guideline_version: int | None
    confirmed_current_guideline: bool
    examples_total: int
    examples_seen: int
    pilot_total: int
    pilot_labelled: int
    norming_done: bool
    qualification_total: int
    qualification_labelled: int
    gate_passed: bool | None  # None until the gate has decided
    replaced: bool = False
    pilot_closed: bool = False  # the researcher closed the pilot: no one starts it any more
    feedback_refusal: str | None = (
        None  # why the pilot's gold is not shown to this annotator (`workflow.pilot_feedback`)
    )

    @property
    def examples_done(self) -> bool:
        return self.examples_seen >= self.examples_total

    @property
    def pilot_done(self) -> bool:
        return self.pilot_total > 0 and self.pilot_labelled >= self.pilot_total

    @property
    def qualification_done(self) -> bool:
        return self.qualification_total > 0 and self.qualification_labelled >= self.qualification_total


def next_step(p: TrainingProgress) -> Step:
    if p.replaced:
        return Step.REPLACED
    if p.gate_passed is False:
        return Step.FAILED
    if p.current_guideline_version is None:
        return Step.WAITING
    if not p.confirmed_current_guideline:
        return Step.GUIDELINE
    if p.gate_passed:
        return Step.PASSED
    if not p.examples_done:
        return Step.EXAMPLES
    if not p.pilot_done:
        return Step.PILOT if p.pilot_total else Step.WAITING
    if not p.norming_done:
        return Step.NORMING
    if not p.qualification_done:
        return Step.QUALIFICATION if p.qualification_total else Step.WAITING
    return Step.WAITING  # all labelled, the gate has not been run (it runs on the last answer)


def waiting_reason(p: TrainingProgress) -> str:
    if p.current_guideline_version is None:
        return "The stage has no guideline yet."
    if not p.pilot_done and not p.pilot_total:
        return "The stage's pilot items have not been chosen yet."
    if not p.qualification_total:
        return "The stage's qualification test has not been set yet."
    return "Your answers are being scored."


def check_action(p: TrainingProgress, action: Action) -> None:
    """Raise StepRefused unless ``action`` is allowed now."""
    if p.replaced:
        raise StepRefused("You were replaced in this stage.")
    if action == Action.CONFIRM_GUIDELINE:
        if p.current_guideline_version is None:
            raise StepRefused("The stage has no guideline yet.")
        return
    if not p.confirmed_current_guideline:
        raise StepRefused("Read and confirm the current guideline first.")
    if action == Action.VIEW_EXAMPLES:
        return
    if action == Action.LABEL_MAIN:
        if p.gate_passed is not True:
            raise StepRefused("Main items open once you have passed the pilot and the qualification test.")
        return
    if not p.examples_done:
        raise StepRefused("Study every worked example first.")
    if action == Action.LABEL_PILOT:
        if p.pilot_done:
            raise StepRefused("Your pilot is already submitted.")
        if not p.pilot_total:
            raise StepRefused("The pilot has not been set up yet.")
        if p.pilot_closed:
            raise StepRefused("The researcher has closed this stage's pilot; no one labels it any more.")
        return
    if not p.pilot_done:
        raise StepRefused("Label every pilot item first.")
    if action in (Action.VIEW_PILOT_FEEDBACK, Action.READ_NORMING):
        if p.feedback_refusal:
            raise StepRefused(p.feedback_refusal)
        return
    if action == Action.NORMING:
        return
    if action == Action.LABEL_QUALIFICATION:
        if not p.norming_done:
            raise StepRefused("Finish the norming discussion first.")
        if p.gate_passed is not None or p.qualification_done:
            raise StepRefused("Your qualification test is already submitted.")
        if not p.qualification_total:
            raise StepRefused("The qualification test has not been set up yet.")
        return
    raise StepRefused(f"Unknown action {action!r}.")
