"""The gate as the service runs it: the decision, both scores and the Unsure rule stored on the
enrolment match hand-computed values, for pass, fail on the pilot, fail on the test, and both rules;
"8 of 10" counted over the whole test and the pilot's coverage floor with Unsure excluded."""

import pytest

from annotation.models import Stage

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
    # Test: 8 right, 1 wrong, 1 Unsure → 8 of 10 under either rule (the Unsure is not correct).
    assert enrollment.qualification_score == pytest.approx(0.8)
    assert (enrollment.qualification_correct, enrollment.qualification_total) == (8, 10)


DEFAULT_FLOOR = Stage._meta.get_field("unsure_min_coverage").default  # 0.8 (migration 0005)


@pytest.mark.parametrize(
    ("rule", "pilot_unsure", "qualification", "failed_on"),
    [
        ("strict", 0, (1, 2), "qualification"),  # 7 right, 1 wrong, 2 Unsure: 7 of 10
        ("exclude", 0, (1, 2), "qualification"),  # the same 7 of 10 (not 7 of 8 answered)
        ("exclude", 3, (0, 0), "pilot"),  # pilot: 7 of 7 answered right, but coverage 7/10 < 0.8
    ],
)
def test_eight_of_ten_and_the_coverage_floor_as_stored(make_user, rule, pilot_unsure, qualification, failed_on):
    s = build_stage(pilot=10, qualification=10, unsure=True, unsure_rule=rule, min_coverage=DEFAULT_FLOOR)
    wrong, unsure = qualification
    enrollment = walk_to_decision(
        s,
        make_user("annotator"),
        pilot_values=answers_with(gold_values(s, s.pilot_items), unsure=pilot_unsure),
        qualification_values=answers_with(gold_values(s, s.qualification_items), wrong=wrong, unsure=unsure),
    )
    assert enrollment.gate_passed is False
    assert [r.split(":")[0] for r in enrollment.gate_detail["reasons"]] == [failed_on]
    if failed_on == "qualification":
        assert (enrollment.qualification_correct, enrollment.qualification_total) == (7, 10)
        assert enrollment.qualification_score == pytest.approx(0.7)
    else:
        assert enrollment.pilot_score == 1.0
        assert enrollment.pilot_coverage == pytest.approx(0.7)
        assert "minimum coverage 80%" in enrollment.gate_detail["reasons"][0]
