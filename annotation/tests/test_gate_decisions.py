"""The gate (pure): pass only when pilot agreement with gold ≥ threshold AND qualification ≥ threshold
(SafeTutors Appendix D: ≥ 80 % on the pilot, ≥ 8 of 10 on the test). Every expected score below is
computed by hand in the comment next to it."""

import pytest

from annotation.workflow.gate import GateParams, GoldComparison, gate_decide, gold_score

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
    params = GateParams(pilot_threshold=0.8, qualification_threshold=0.8, unsure_rule="exclude", min_coverage=0.5)
    decision = gate_decide(PILOT_WITH_UNSURE, TEST_WITH_UNSURE, params)
    # Pilot: 11 of the 12 answered = 0.917, coverage 12/15 = 0.80. Test: 8 of 9 = 0.889, coverage 0.90.
    assert decision.pilot.agreement == pytest.approx(11 / 12)
    assert decision.pilot.coverage == pytest.approx(12 / 15)
    assert decision.qualification.agreement == pytest.approx(8 / 9)
    assert decision.qualification.coverage == pytest.approx(0.9)
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
