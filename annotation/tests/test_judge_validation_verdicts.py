"""Verdicts rest on chance-corrected agreement: on 200 turns labelled by three annotators who agree well
(α ≥ 0.80), a judge that answers the same value everywhere and a judge that answers at random fail every
metric, even where the constant judge's exact agreement is high (the commonest label); a judge equal to the
consensus on 90 % of the turns passes every metric. Every verdict states κ with its bootstrap CI, and κ is
scikit-learn's. Weak human agreement fails; imported single labels (no human α) never pass."""

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from annotation.judge_validation import report
from annotation.judge_validation.rubric import SCALE
from audits.judge import METRICS

N = 200
THRESHOLDS = report.Thresholds()  # the defaults: human α ≥ 0.80, judge κ ≥ 0.80


SKEWED = [0.84, 0.10, 0.06]  # MRBench's answer leakage: 84 % "No"


def consensus_for(metric_index: int, rng, shares=None) -> dict[int, str]:
    """Fairly balanced labels for most metrics, and for one a common value (60 / 25 / 15 %)."""
    shares = shares or ([0.6, 0.25, 0.15] if metric_index == 1 else [0.4, 0.3, 0.3])
    return {item: str(v) for item, v in enumerate(rng.choice(3, size=N, p=shares))}


def humans_around(consensus: dict[int, str], rng) -> dict[int, dict[int, str]]:
    """Three annotators: two give the consensus, the third deviates by one step on 5 % of the items."""
    labels = {}
    for item, value in consensus.items():
        third = value
        if rng.random() < 0.05:
            third = str(1 if value != "1" else rng.choice([0, 2]))
        labels[item] = {1: value, 2: value, 3: third}
    return labels


def near(consensus: dict[int, str], share_equal: float, rng) -> dict[int, str]:
    """Equal to the consensus on ``share_equal`` of the items (exactly), one step off on the rest."""
    items = sorted(consensus)
    off = set(rng.choice(items, size=round(len(items) * (1 - share_equal)), replace=False).tolist())
    return {i: (str(1 if consensus[i] != "1" else 2) if i in off else consensus[i]) for i in items}


def verdicts(metric_index: int, seed: int = 7, shares=None):
    rng = np.random.default_rng(seed + metric_index)
    consensus = consensus_for(metric_index, rng, shares)
    humans = humans_around(consensus, rng)
    labels = report.MetricLabels(metric=METRICS[metric_index], scale=SCALE, human_pre=humans, consensus=consensus)
    commonest = max(SCALE, key=lambda v: sum(c == v for c in consensus.values()))
    judges = {
        "constant": dict.fromkeys(consensus, commonest),
        "random": {item: str(v) for item, v in zip(consensus, rng.integers(0, 3, size=N), strict=True)},
        "ninety": near(consensus, 0.90, rng),
    }
    return consensus, judges, report.metric_report(labels, judges, THRESHOLDS)


@pytest.mark.parametrize("metric_index", range(len(METRICS)))
def test_constant_and_random_judges_fail_and_a_judge_right_on_90_percent_passes(metric_index):
    consensus, judges, row = verdicts(metric_index)
    assert row["human_alpha_pre"]["value"] >= 0.80
    outcomes = {key: section["verdict"]["outcome"] for key, section in row["judges"].items()}
    assert outcomes == {"constant": "fail", "random": "fail", "ninety": "pass"}, {
        k: s["verdict"] for k, s in row["judges"].items()
    }
    for key, section in row["judges"].items():
        items = sorted(consensus)
        expected = cohen_kappa_score(
            [int(judges[key][i]) for i in items], [int(consensus[i]) for i in items], weights="linear", labels=[0, 1, 2]
        )
        kappa = section["kappa_linear"]
        assert kappa["value"] == pytest.approx(expected, abs=1e-12)
        assert kappa["ci_low"] <= kappa["value"] <= kappa["ci_high"] and kappa["resamples"] > 1900
        assert "95 % CI" in section["verdict"]["kappa"]
    assert row["judges"]["constant"]["kappa_linear"]["value"] == pytest.approx(0.0)


def test_a_constant_judge_fails_where_most_labels_are_the_same():
    """The case of the published answer-leakage labels: the constant judge agrees on 84 % of turns, κ = 0."""
    _, _, row = verdicts(1, shares=SKEWED)
    constant = row["judges"]["constant"]
    assert constant["exact_agreement"] > 0.8 and constant["kappa_linear"]["value"] == pytest.approx(0.0)
    assert constant["verdict"]["outcome"] == "fail" and row["judges"]["random"]["verdict"]["outcome"] == "fail"


def test_weak_human_agreement_fails_and_imported_labels_never_pass():
    rng = np.random.default_rng(3)
    consensus = consensus_for(0, rng)
    noisy = {i: {1: v, 2: str(rng.integers(0, 3)), 3: str(rng.integers(0, 3))} for i, v in consensus.items()}
    judge = dict(consensus)
    weak = report.metric_report(
        report.MetricLabels(metric="actionability", scale=SCALE, human_pre=noisy, consensus=consensus),
        {"j": judge},
        THRESHOLDS,
    )
    assert weak["human_alpha_pre"]["value"] < 0.8
    assert weak["judges"]["j"]["verdict"]["outcome"] == "fail"
    assert any(r.startswith("human α") for r in weak["judges"]["j"]["verdict"]["reasons"])

    imported = report.metric_report(
        report.MetricLabels(metric="actionability", scale=SCALE, consensus=consensus), {"j": judge}, THRESHOLDS
    )
    verdict = imported["judges"]["j"]["verdict"]
    assert imported["judges"]["j"]["kappa_linear"]["value"] == pytest.approx(1.0)
    assert verdict["outcome"] == "undecided" and verdict["reasons"] == [report.HUMAN_RELIABILITY_UNKNOWN]

    unlabelled = report.metric_report(
        report.MetricLabels(metric="corrective_tone", scale=SCALE),
        {"j": judge},
        THRESHOLDS,
        "the file lacks Tutor_Tone",
    )
    found = unlabelled["judges"]["j"]["verdict"]
    assert (found["outcome"], found["reasons"], found["conditions"]) == (
        report.NOT_LABELLED,
        ["the file lacks Tutor_Tone"],
        [],
    )


def test_a_judge_that_calls_everything_not_applicable_does_not_pass():
    consensus = {i: str(i % 3) for i in range(60)}
    humans = {i: {1: v, 2: v} for i, v in consensus.items()}
    judge = {i: (report.NA if i % 2 else v) for i, v in consensus.items()}  # right where it answers, n/a on half
    row = report.metric_report(
        report.MetricLabels(metric="actionability", scale=SCALE, human_pre=humans, consensus=consensus),
        {"j": judge},
        THRESHOLDS,
    )
    section = row["judges"]["j"]
    assert section["kappa_linear"]["value"] == pytest.approx(1.0) and section["applicability_mismatch"] == 0.5
    assert section["verdict"]["outcome"] == "fail"


def test_the_bootstrap_kappa_is_scikit_learns_on_every_resample_whatever_the_block_size(monkeypatch):
    rng = np.random.default_rng(11)
    consensus = rng.integers(0, 3, size=300)
    judge = np.where(rng.random(300) < 0.8, consensus, rng.integers(0, 3, size=300))
    monkeypatch.setattr(report, "BOOTSTRAP_BLOCK_CELLS", 300 * 7)  # blocks of 7 resamples
    values = report.kappa_bootstrap(judge, consensus, 3, seed=5, resamples=40)
    monkeypatch.setattr(report, "BOOTSTRAP_BLOCK_CELLS", 10**9)  # one block
    assert np.array_equal(values, report.kappa_bootstrap(judge, consensus, 3, seed=5, resamples=40))
    index = np.random.default_rng(5).integers(0, 300, size=(40, 300))
    expected = [cohen_kappa_score(judge[i], consensus[i], weights="linear", labels=[0, 1, 2]) for i in index]
    assert values == pytest.approx(expected, abs=1e-12)
