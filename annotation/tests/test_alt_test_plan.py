"""Planning: items per annotator for the alt-test to pass, and items for κ's interval to reach a half-width."""

import time

import numpy as np
import pytest

from annotation.agreement_intervals import _kappa_from_tables, cohen_interval
from annotation.alt_test import alt_test
from annotation.alt_test_plan import _passes, _simulate_labels, alt_test_plan, kappa_half_width_plan


def test_the_vectorised_decision_equals_alt_test():
    # The planner's fast path must take the same decision as annotation.alt_test on full-overlap data.
    rng = np.random.default_rng(0)
    decisions = set()
    for judge_accuracy in (0.5, 0.65, 0.75, 0.85, 0.95):
        for _ in range(4):
            _, labels = _simulate_labels(rng, 60, 4, [0.8] * 4 + [judge_accuracy], np.full(3, 1 / 3))
            human = {f"h{a}": {f"i{i}": int(v) for i, v in enumerate(labels[a])} for a in range(4)}
            judge = {f"i{i}": int(v) for i, v in enumerate(labels[-1])}
            expected = alt_test(human, judge, epsilon=0.15).passed
            assert _passes(labels[:-1], labels[-1], 0.15, 0.05) == expected
            decisions.add(expected)
    assert decisions == {True, False}


def test_plan_finds_the_smallest_size_reaching_the_target_quickly():
    started = time.perf_counter()
    plan = alt_test_plan(judge_accuracy=0.85, annotator_accuracy=0.8, n_annotators=3, epsilon=0.2, seed=1)
    elapsed = time.perf_counter() - started

    n = plan["items_per_annotator"]
    assert n is not None and plan["pass_rate"][n] >= 0.8
    assert all(rate < 0.8 for size, rate in plan["pass_rate"].items() if size < n)
    assert elapsed < 2.0  # typically well under a second
    assert "3 annotators" in plan["assumptions"]


def test_a_weaker_judge_needs_more_items_or_cannot_pass():
    strong = alt_test_plan(judge_accuracy=0.9, annotator_accuracy=0.8, n_annotators=4, epsilon=0.2, seed=2)
    weak = alt_test_plan(judge_accuracy=0.6, annotator_accuracy=0.8, n_annotators=4, epsilon=0.05, seed=2)

    assert strong["items_per_annotator"] is not None
    assert weak["items_per_annotator"] is None
    assert max(weak["pass_rate"].values()) < 0.8


def test_plan_rejects_impossible_settings():
    with pytest.raises(ValueError):
        alt_test_plan(judge_accuracy=0.9, annotator_accuracy=0.8, n_annotators=1, epsilon=0.2)
    with pytest.raises(ValueError):
        alt_test_plan(judge_accuracy=0.9, annotator_accuracy=0.8, n_annotators=3, epsilon=0.2, class_shares=[0.5, 0.4])


@pytest.mark.parametrize(("kappa", "prevalence", "half_width"), [(0.8, 0.5, 0.1), (0.6, 0.84, 0.1), (0.4, 0.7, 0.15)])
def test_kappa_plan_gives_the_half_width_by_simulation(kappa, prevalence, half_width):
    # The asymptotic variance (Fleiss, Cohen & Everitt 1969) checked by simulation: draw many samples of the
    # planned size from the population 2 × 2 table and take 1.96 × SD of κ (scikit-learn's formula).
    n = kappa_half_width_plan(kappa=kappa, prevalence=prevalence, half_width=half_width)
    chance = prevalence**2 + (1 - prevalence) ** 2
    off = (1 - (kappa * (1 - chance) + chance)) / 2
    cells = np.array([prevalence - off, off, off, 1 - prevalence - off])
    rng = np.random.default_rng(5)
    tables = rng.multinomial(n, cells, size=4000).reshape(-1, 2, 2).astype(float)
    kappas = _kappa_from_tables(tables, 1 - np.eye(2))
    simulated = 1.96 * np.nanstd(kappas)

    assert simulated == pytest.approx(half_width, rel=0.12)


def test_kappa_plan_matches_the_bootstrap_interval_at_that_size():
    n = kappa_half_width_plan(kappa=0.7, prevalence=0.6, half_width=0.1)
    chance = 0.6**2 + 0.4**2
    off = (1 - (0.7 * (1 - chance) + chance)) / 2
    rng = np.random.default_rng(6)
    cell = rng.choice(4, size=n, p=[0.6 - off, off, off, 0.4 - off])
    pairs = [(i, c // 2, c % 2) for i, c in enumerate(cell)]
    interval = cohen_interval(pairs, [0, 1])

    assert (interval["high"] - interval["low"]) / 2 == pytest.approx(0.1, rel=0.15)


def test_kappa_plan_grows_as_the_half_width_shrinks_and_rejects_the_unattainable():
    wide = kappa_half_width_plan(kappa=0.8, prevalence=0.5, half_width=0.2)
    narrow = kappa_half_width_plan(kappa=0.8, prevalence=0.5, half_width=0.05)
    assert narrow > 10 * wide

    with pytest.raises(ValueError):
        kappa_half_width_plan(kappa=-0.9, prevalence=0.95, half_width=0.1)
    with pytest.raises(ValueError):
        kappa_half_width_plan(kappa=0.5, prevalence=1.0, half_width=0.1)
