"""The pilot feedback rule, pure: who sees the pilot's gold under each setting, which scores an annotator sees, when
the settings may change, and that a closed pilot takes no labels."""

import pytest

from annotation.workflow.pilot_feedback import (
    AFTER_CLOSE,
    NEVER,
    NO_FEEDBACK,
    NOT_CLOSED,
    NOT_PASSED,
    PASSED,
    feedback_refusal,
    settings_problems,
    visible_scores,
)
from annotation.workflow.training import Action, StepRefused, TrainingProgress, check_action


@pytest.mark.parametrize(
    ("policy", "passed", "closed", "refusal"),
    [
        (PASSED, True, False, None),
        (PASSED, False, False, NOT_PASSED),
        (PASSED, False, True, NOT_PASSED),  # closing does not open it under "passed"
        (AFTER_CLOSE, True, False, NOT_CLOSED),  # not even to who passed, until it closes
        (AFTER_CLOSE, False, True, None),
        (NEVER, True, True, NO_FEEDBACK),
    ],
)
def test_who_sees_the_pilots_gold(policy, passed, closed, refusal):
    assert feedback_refusal(policy, pilot_passed=passed, pilot_closed=closed) == refusal


def test_scores_follow_the_gold_and_the_gate():
    failed = visible_scores(feedback_shown=False, gate_passed=False)
    assert (failed.pilot, failed.qualification) == (False, False)
    shown = visible_scores(feedback_shown=True, gate_passed=False)
    assert (shown.pilot, shown.qualification) == (True, False)
    assert visible_scores(feedback_shown=False, gate_passed=True).qualification


def test_settings_rule():
    assert settings_problems(policy=PASSED, closed=True, was_policy=PASSED, was_closed=False) == []
    assert "one of" in settings_problems(policy="sometimes", closed=False, was_policy=PASSED, was_closed=False)[0]
    reopen = settings_problems(policy=AFTER_CLOSE, closed=False, was_policy=AFTER_CLOSE, was_closed=True)
    assert reopen and "cannot reopen" in reopen[0]
    assert settings_problems(policy=NEVER, closed=False, was_policy=NEVER, was_closed=True) == []


def progress(**changes) -> TrainingProgress:
    base = {
        "current_guideline_version": 1,
        "confirmed_current_guideline": True,
        "examples_total": 0,
        "examples_seen": 0,
        "pilot_total": 15,
        "pilot_labelled": 15,
        "norming_done": False,
        "qualification_total": 10,
        "qualification_labelled": 0,
        "gate_passed": None,
    }
    return TrainingProgress(**(base | changes))


def test_the_step_machine_applies_it():
    with pytest.raises(StepRefused, match="closed"):
        check_action(progress(pilot_labelled=3, pilot_closed=True), Action.LABEL_PILOT)
    for action in (Action.VIEW_PILOT_FEEDBACK, Action.READ_NORMING):
        with pytest.raises(StepRefused) as refused:
            check_action(progress(feedback_refusal=NOT_PASSED), action)
        assert str(refused.value) == NOT_PASSED
        check_action(progress(), action)
    check_action(progress(feedback_refusal=NOT_PASSED), Action.NORMING)  # the step itself goes on
