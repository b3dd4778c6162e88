"""The gate (pure): pass only when pilot agreement with gold ≥ threshold AND at least K of the N test items
are correct (SafeTutors Appendix D: ≥ 80 % on the pilot, ≥ 8 of 10 on the test; Unsure is not correct).
With Unsure excluded, the pilot also needs its minimum coverage. Every expected score below is computed
by hand in the comment next to it."""

import pytest

from annotation.workflow.gate import GateParams, GoldComparison, gate_decide, gate_rules, gold_score

PAPER = GateParams(pilot_threshold=0.80, qualification_threshold=8 / 10, unsure_rule="strict")


def answers(correct: int, wrong: int = 0, unsure: int = 0) -> list[GoldComparison]:
    return (
        [GoldComparison(value="yes", gold="yes")] * correct
        + [GoldComparison(value="no", gold="yes")] * wrong
        + [GoldComparison(value=None, gold="yes", unsure=True)] * unsure
    )


def test_pass():
    decision = gate_decide(answers(25, wrong=5), answers(9, wrong=1), PAPER)
    assert decision.passed
    assert decision.pilot.agreement == pytest.approx(25 / 30)  # 0.833
    assert decision.qualification.agreement == pytest.approx(0.9)
    assert decision.qualification.correct == 9
    assert decision.rule == "strict"
    assert decision.reasons == []


def test_exactly_at_both_thresholds_passes():
    decision = gate_decide(answers(24, wrong=6), answers(8, wrong=2), PAPER)  # 24/30 = 0.80, 8/10
    assert decision.passed


def test_fail_on_pilot():
    decision = gate_decide(answers(23, wrong=7), answers(10), PAPER)  # 23/30 = 0.767 < 0.80
    assert not decision.passed
    assert decision.pilot.agreement == pytest.approx(23 / 30)
    assert decision.qualification.agreement == 1.0
    assert len(decision.reasons) == 1 and decision.reasons[0].startswith("pilot")


def test_fail_on_qualification():
    decision = gate_decide(answers(30), answers(7, wrong=3), PAPER)  # 7/10 < 8/10
    assert not decision.passed
    assert decision.pilot.agreement == 1.0
    assert (decision.qualification.correct, decision.qualification.total) == (7, 10)
    assert len(decision.reasons) == 1 and decision.reasons[0].startswith("qualification")


# A crowd-stage annotator (15 pilot items) who answered Unsure three times on the pilot and once on the test.
PILOT_WITH_UNSURE = answers(11, wrong=1, unsure=3)
TEST_WITH_UNSURE = answers(8, wrong=1, unsure=1)


def test_unsure_strict_counts_unsure_as_a_miss():
    decision = gate_decide(PILOT_WITH_UNSURE, TEST_WITH_UNSURE, PAPER)
    # Pilot: 11 of 15 = 0.733 (the three Unsure are misses) → fail. Test: 8 of 10 = 0.80.
    assert decision.pilot.agreement == pytest.approx(11 / 15)
    assert decision.pilot.coverage == 1.0
    assert decision.pilot.unsure == 3
    assert decision.qualification.agreement == pytest.approx(0.8)
    assert not decision.passed
    assert decision.rule == "strict"


def test_unsure_excluded_reports_coverage():
    params = GateParams(pilot_threshold=0.8, qualification_threshold=0.8, unsure_rule="exclude", min_coverage=0.8)
    decision = gate_decide(PILOT_WITH_UNSURE, TEST_WITH_UNSURE, params)
    # Pilot: 11 of the 12 answered = 0.917, coverage 12/15 = 0.80 (exactly the floor).
    # Test: counted over all 10 items whatever the rule: 8 of 10 = 0.80 (the Unsure is not correct).
    assert decision.pilot.agreement == pytest.approx(11 / 12)
    assert decision.pilot.coverage == pytest.approx(12 / 15)
    assert decision.qualification.agreement == pytest.approx(0.8)
    assert (decision.qualification.correct, decision.qualification.total) == (8, 10)
    assert decision.passed
    assert decision.rule == "exclude"
    assert decision.as_dict()["params"]["unsure_rule"] == "exclude"


def test_unsure_excluded_below_minimum_coverage_fails():
    params = GateParams(unsure_rule="exclude", min_coverage=0.5)
    decision = gate_decide(answers(6, unsure=9), answers(10), params)
    # Pilot: 6 of 6 answered = 1.0, but coverage 6/15 = 0.40 < 0.50.
    assert decision.pilot.agreement == 1.0
    assert decision.pilot.coverage == pytest.approx(0.4)
    assert not decision.passed
    assert "coverage" in decision.reasons[0]


@pytest.mark.parametrize("rule", ["strict", "exclude"])
def test_seven_right_one_wrong_two_unsure_is_not_eight_of_ten(rule):
    params = GateParams(pilot_threshold=0.8, qualification_threshold=8 / 10, unsure_rule=rule, min_coverage=0.8)
    decision = gate_decide(answers(30), answers(7, wrong=1, unsure=2), params)
    # 7 correct of 10 items; under "exclude" the old reading was 7 of 8 answered = 0.875 and passed.
    assert not decision.passed
    assert (decision.qualification.correct, decision.qualification.total) == (7, 10)
    assert decision.qualification.agreement == pytest.approx(0.7)
    assert decision.reasons == [
        "qualification: 7 of 10 correct, 2 Unsure; at least 8 of 10 needed (Unsure counts as not correct)"
    ]


@pytest.mark.parametrize(
    ("unsure", "passed", "coverage"),
    [
        (4, False, 11 / 15),  # 11 answered of 15 = 0.733 < 0.80, although all 11 are right
        (3, True, 12 / 15),  # 12 of 15 = 0.80 meets the floor
    ],
)
def test_pilot_exclude_needs_the_default_coverage_floor(unsure, passed, coverage):
    params = GateParams(unsure_rule="exclude", min_coverage=0.8)  # Stage.unsure_min_coverage's default
    decision = gate_decide(answers(15 - unsure, unsure=unsure), answers(10), params)
    assert decision.pilot.agreement == 1.0
    assert decision.pilot.coverage == pytest.approx(coverage)
    assert decision.passed is passed
    if not passed:
        assert decision.reasons == [
            "pilot: coverage 73.3% (11 of 15 items answered, 4 Unsure) is below the minimum coverage 80% "
            "required when Unsure is excluded"
        ]


def test_the_coverage_floor_is_the_pilots_under_exclude_only():
    # Strict: Unsure is a miss, so no floor is needed; the test has no floor under either rule.
    strict = gate_decide(answers(13, unsure=2), answers(8, unsure=2), GateParams(min_coverage=0.95))
    assert strict.passed  # pilot 13/15 = 0.867, test 8 of 10
    exclude = gate_decide(answers(15), answers(8, unsure=2), GateParams(unsure_rule="exclude", min_coverage=0.95))
    assert exclude.passed


def test_rules_in_words():
    strict = gate_rules(PAPER, pilot_size=30, qualification_size=10)
    assert (
        strict["pilot"]
        == "Pilot (30 gold items): agreement with gold of at least 80%; an Unsure answer counts as a miss."
    )
    assert strict["qualification"] == "Qualification test: at least 8 of 10 correct, Unsure counts as not correct."
    exclude = gate_rules(GateParams(unsure_rule="exclude", min_coverage=0.8), pilot_size=15, qualification_size=10)
    assert exclude["pilot"] == (
        "Pilot (15 gold items): agreement with gold of at least 80%; Unsure answers are left out of the agreement, "
        "its coverage (answered / pilot items) is reported, and at least 80% of the pilot items must get a real answer."
    )


def test_everything_unsure_and_excluded_is_undefined_and_fails():
    params = GateParams(unsure_rule="exclude", min_coverage=0.0)
    decision = gate_decide(answers(0, unsure=15), answers(10), params)
    assert decision.pilot.agreement is None
    assert not decision.passed


def test_unanswered_items_cannot_be_scored():
    with pytest.raises(ValueError):
        gold_score([GoldComparison(value=None, gold="yes")], "strict")


def test_unknown_rule_is_refused():
    with pytest.raises(ValueError):
        GateParams(unsure_rule="lenient")
