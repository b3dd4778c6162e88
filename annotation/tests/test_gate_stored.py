"""The gate as the service runs it: the decision, both scores and the Unsure rule stored on the
enrolment match hand-computed values, for pass, fail on the pilot, fail on the test, and both rules."""

import pytest

from .training_setup import answers_with, build_stage, walk_to_decision

pytestmark = pytest.mark.django_db


def gold_values(s, items):
    return [s.gold[i.id] for i in items]


def test_pass_stored_with_scores_and_rule(make_user):
    s = build_stage(pilot=10, qualification=10)
    enrollment = walk_to_decision(
        s,
        make_user("annotator"),
        pilot_values=answers_with(gold_values(s, s.pilot_items), wrong=2),  # 8/10 = 0.80
        qualification_values=answers_with(gold_values(s, s.qualification_items), wrong=1),  # 9/10
    )
    assert enrollment.gate_passed is True
    assert enrollment.status == "passed"
    assert enrollment.pilot_score == pytest.approx(0.8)
    assert (enrollment.qualification_correct, enrollment.qualification_total) == (9, 10)
    assert enrollment.gate_rule == "strict"
    assert enrollment.gate_detail["passed"] is True
    assert enrollment.decided_at is not None


def test_fail_on_pilot_stored(make_user):
    s = build_stage(pilot=10, qualification=10)
    enrollment = walk_to_decision(
        s,
        make_user("annotator"),
        pilot_values=answers_with(gold_values(s, s.pilot_items), wrong=3),  # 7/10
    )
    assert enrollment.gate_passed is False
    assert enrollment.status == "failed"
    assert enrollment.pilot_score == pytest.approx(0.7)
    assert enrollment.qualification_correct == 10
    assert [r.split(":")[0] for r in enrollment.gate_detail["reasons"]] == ["pilot"]


def test_fail_on_qualification_stored(make_user):
    s = build_stage(pilot=10, qualification=10)
    enrollment = walk_to_decision(
        s,
        make_user("annotator"),
        qualification_values=answers_with(gold_values(s, s.qualification_items), wrong=3),  # 7/10
    )
    assert enrollment.gate_passed is False
    assert enrollment.pilot_score == 1.0
    assert enrollment.qualification_correct == 7
    assert [r.split(":")[0] for r in enrollment.gate_detail["reasons"]] == ["qualification"]


@pytest.mark.parametrize(
    ("rule", "passed", "pilot_score", "pilot_coverage"),
    [
        ("strict", False, 11 / 15, 1.0),  # 11 right of 15; the 3 Unsure are misses
        ("exclude", True, 11 / 12, 12 / 15),  # 11 right of the 12 answered; coverage 0.80
    ],
)
def test_unsure_rules_stored(make_user, rule, passed, pilot_score, pilot_coverage):
    s = build_stage(pilot=15, qualification=10, unsure=True, unsure_rule=rule, min_coverage=0.5)
    enrollment = walk_to_decision(
        s,
        make_user("annotator"),
        pilot_values=answers_with(gold_values(s, s.pilot_items), wrong=1, unsure=3),
        qualification_values=answers_with(gold_values(s, s.qualification_items), wrong=1, unsure=1),
    )
    assert enrollment.gate_passed is passed
    assert enrollment.gate_rule == rule
    assert enrollment.pilot_score == pytest.approx(pilot_score)
    assert enrollment.pilot_coverage == pytest.approx(pilot_coverage)
    # Test: 8 right, 1 wrong, 1 Unsure → strict 8/10, excluded 8/9 with coverage 0.9.
    assert enrollment.qualification_score == pytest.approx(0.8 if rule == "strict" else 8 / 9)
    assert enrollment.qualification_coverage == pytest.approx(1.0 if rule == "strict" else 0.9)
