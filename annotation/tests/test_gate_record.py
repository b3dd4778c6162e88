"""A pass decided outside a stage's own training (carried over after a rubric workshop, or a demo account) goes
through `enrollment_gate_record`, the one writer of the gate fields besides the gate itself: it records the pass
with its rule and detail once, and never overwrites a decision already taken."""

import pytest

from annotation.models import Enrollment
from annotation.services.enrollment import enrollment_create
from annotation.services.training import enrollment_gate_record

from .main_setup import build_main_stage

pytestmark = pytest.mark.django_db


def test_a_carried_over_pass_is_recorded_once_and_a_decided_gate_is_kept(make_user):
    s = build_main_stage(items=2)
    user, failed = make_user("annotator"), make_user("annotator")
    carried = enrollment_gate_record(
        enrollment=enrollment_create(stage=s.stage, user=user),
        rule="carried",
        detail={"carried_over_from_stage": 7},
        pilot_score=0.9,
    )
    assert (carried.status, carried.gate_passed, carried.gate_rule) == (Enrollment.Status.PASSED, True, "carried")
    assert carried.gate_detail == {"carried_over_from_stage": 7} and carried.pilot_score == 0.9
    assert carried.decided_at is not None

    decided = enrollment_create(stage=s.stage, user=failed)
    Enrollment.objects.filter(pk=decided.pk).update(status=Enrollment.Status.FAILED, gate_passed=False)
    kept = enrollment_gate_record(enrollment=decided, rule="demo", detail={})
    assert (kept.status, kept.gate_passed) == (Enrollment.Status.FAILED, False)
