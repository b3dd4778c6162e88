"""The verdict follows its named rule: under `interval` (the default) a metric passes only when the lower bound
of the judge's κ interval reaches the threshold; `point` (the point estimate) stays selectable for comparison.

Data as the issue simulated it: 3 annotators × 180 turns, 84 % of one class. A constant judge, a random judge, a
judge that copies one annotator (human α ≥ 0.80) and a judge agreeing with the consensus on 90 % of the turns:
each verdict is the one the stated interval rule gives, and over many data sets no pass has a lower bound under
the threshold, while the point rule passes some of them (so the two rules differ, and the test can fail)."""

import numpy as np
import pytest

from annotation.judge_validation import report
from annotation.judge_validation.rubric import SCALE

N_TURNS, N_ANNOTATORS = 180, 3
PREVALENCE = [0.84, 0.10, 0.06]
THRESHOLDS = report.Thresholds()


def dataset(seed: int, annotator_accuracy: float = 0.97):
    """True labels at 84 % prevalence; each annotator gives the truth with ``annotator_accuracy``, else
    another value; the consensus is the annotators' majority (the first annotator's value on a three-way tie)."""
    rng = np.random.default_rng(seed)
    truth = rng.choice(3, size=N_TURNS, p=PREVALENCE)
    humans: dict[int, dict[int, str]] = {}
    for item, value in enumerate(truth):
        given = [
            int(value) if rng.random() < annotator_accuracy else int(rng.choice([v for v in range(3) if v != value]))
            for _ in range(N_ANNOTATORS)
        ]
        humans[item] = {annotator + 1: str(v) for annotator, v in enumerate(given)}
    consensus = {}
    for item, by_annotator in humans.items():
        values = list(by_annotator.values())
        consensus[item] = max(values, key=lambda v: (values.count(v), v == values[0]))
    return rng, humans, consensus


def judges_for(rng, humans, consensus) -> dict[str, dict[int, str]]:
    items = sorted(consensus)
    commonest = max(SCALE, key=lambda v: sum(c == v for c in consensus.values()))
    ninety = {}
    for item in items:
        right = rng.random() < 0.90
        ninety[item] = consensus[item] if right else str(rng.choice([v for v in range(3) if str(v) != consensus[item]]))
    return {
        "constant": dict.fromkeys(items, commonest),
        "random": {item: str(v) for item, v in zip(items, rng.integers(0, 3, size=len(items)), strict=True)},
        "copy": {item: humans[item][1] for item in items},
        "ninety": ninety,
    }


def row_for(seed: int, rule: str = report.DEFAULT_VERDICT_RULE):
    rng, humans, consensus = dataset(seed)
    labels = report.MetricLabels(metric="actionability", scale=SCALE, human_pre=humans, consensus=consensus)
    return report.metric_report(labels, judges_for(rng, humans, consensus), THRESHOLDS, rule=rule)


def expected_by_interval(section: dict, row: dict) -> str:
    """The interval rule, restated from the numbers the verdict shows."""
    low = section["kappa_linear"]["ci_low"]
    human_ok = row["human_alpha_pre"]["value"] >= THRESHOLDS.human_alpha_min
    applies_ok = section["applicability_mismatch"] <= 1 - THRESHOLDS.judge_agreement_min
    if low is None:
        return report.UNDECIDED
    return report.PASS if low >= THRESHOLDS.judge_agreement_min and human_ok and applies_ok else report.FAIL


def test_each_judge_gets_the_verdict_the_interval_rule_states():
    row = row_for(1)
    assert row["human_alpha_pre"]["value"] >= 0.80
    outcomes = {key: section["verdict"]["outcome"] for key, section in row["judges"].items()}
    assert outcomes["constant"] == outcomes["random"] == report.FAIL
    for key, section in row["judges"].items():
        found = section["verdict"]
        assert found["rule"] == "interval" and found["rule_text"] == report.VERDICT_RULES["interval"]
        assert found["outcome"] == expected_by_interval(section, row), (key, found)
        assert found["n"] == N_TURNS
        assert found["interval"]["low"] == section["kappa_linear"]["ci_low"]
        assert found["interval"]["high"] == section["kappa_linear"]["ci_high"]
        kappa_condition = next(c for c in found["conditions"] if c["condition"] == "judge κ")
        assert "lower bound" in kappa_condition["text"]
        if found["outcome"] == report.FAIL:
            assert any("lower bound" in reason or "human α" in reason for reason in found["reasons"])
    # the constant judge: κ = 0, so its interval's lower bound is far under the threshold, and it says so
    constant = row["judges"]["constant"]["verdict"]
    assert constant["reasons"][0].startswith("the lower bound")


def test_a_pass_never_has_a_lower_bound_under_the_threshold_while_the_point_rule_passes_some():
    point_passes_under_bound = 0
    interval_passes = 0
    for seed in range(12):
        interval = row_for(seed, rule="interval")
        point = row_for(seed, rule="point")
        for key in ("copy", "ninety"):
            section, other = interval["judges"][key], point["judges"][key]
            assert section["kappa_linear"] == other["kappa_linear"]  # the same numbers; only the rule differs
            assert section["verdict_by_rule"] == {
                "interval": section["verdict"]["outcome"],
                "point": other["verdict"]["outcome"],
            }
            low = section["kappa_linear"]["ci_low"]
            if section["verdict"]["outcome"] == report.PASS:
                interval_passes += 1
                assert low >= THRESHOLDS.judge_agreement_min
            assert section["verdict"]["outcome"] == expected_by_interval(section, interval)
            if other["verdict"]["outcome"] == report.PASS and low < THRESHOLDS.judge_agreement_min:
                point_passes_under_bound += 1
                assert section["verdict"]["outcome"] == report.FAIL
    assert point_passes_under_bound > 0  # the data sets do hold cases where the rules disagree
    assert interval_passes > 0  # and cases where the interval rule passes


def test_the_rule_is_chosen_by_name_and_a_wrong_name_is_refused():
    assert report.verdict_rule_from(None) == report.verdict_rule_from("") == "interval"
    assert report.verdict_rule_from("point") == "point"
    with pytest.raises(report.VerdictRuleError, match="interval, point"):
        report.verdict_rule_from("median")


def test_a_kappa_without_an_interval_is_undecided_under_the_interval_rule_only():
    kappa = {"value": 0.9, "n_units": 3, "ci_low": None, "ci_high": None, "ci_level": 0.95}
    human = report.AgreementResult("krippendorff_alpha_ordinal", 0.95, 40)
    common = {"human": human, "kappa": kappa, "n_compared": 3, "n_consensus": 3, "mismatch": 0.0}
    interval = report.verdict(**common, thresholds=THRESHOLDS, rule="interval")
    point = report.verdict(**common, thresholds=THRESHOLDS, rule="point")
    assert interval["outcome"] == report.UNDECIDED and "no bootstrap interval" in interval["reasons"][0]
    assert point["outcome"] == report.PASS and point["reasons"] == []


def test_units_are_stated_for_alpha_and_kappa_apart():
    humans = {1: {1: "0", 2: "1"}, 2: {1: "2"}, 3: {1: "1", 2: "1", 3: report.NA}, 4: {1: report.NA}}
    assert report.alpha_units(humans) == {"items_rated": 3, "items_pairable": 2, "pairable_values": 4}
    row = report.metric_report(
        report.MetricLabels(metric="m", scale=SCALE, human_pre=humans, consensus={1: "0", 2: "2", 3: "1"}),
        {"j": {1: "0", 2: "2", 3: "1"}},
        THRESHOLDS,
    )
    assert row["human_alpha_pre"]["units"]["items_pairable"] == row["human_alpha_pre"]["n_units"] == 2
    assert row["judges"]["j"]["kappa_linear"]["n_units"] == 3
    # κ's raters are the judge and the consensus: 3 turns both rated on the scale, 6 ratings.
    assert row["judges"]["j"]["kappa_linear"]["units"] == {"items_rated": 3, "items_pairable": 3, "pairable_values": 6}


def test_a_recording_from_before_the_named_rules_is_read_under_the_interval_rule():
    old_pass = {"verdict": "pass", "kappa_linear": 0.85, "kappa_ci": [0.78, 0.9]}
    assert report.recorded_outcome(old_pass, 0.8) == ("fail", "point")
    assert report.recorded_outcome(old_pass, 0.8, "point") == ("pass", "point")
    assert report.recorded_outcome({**old_pass, "kappa_ci": [0.81, 0.9]}, 0.8) == ("pass", "point")
    assert report.recorded_outcome({**old_pass, "kappa_ci": [None, None]}, 0.8) == ("undecided", "point")
    assert report.recorded_outcome({"verdict": "fail", "kappa_ci": [0.9, 0.95]}, 0.8) == ("fail", "point")
    new = {"verdict": "fail", "verdict_rule": "interval", "verdict_by_rule": {"interval": "fail", "point": "pass"}}
    assert report.recorded_outcome(new, 0.8) == ("fail", "interval")
    assert report.recorded_outcome(new, 0.8, "point") == ("pass", "interval")
