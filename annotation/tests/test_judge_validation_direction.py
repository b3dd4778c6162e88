"""The judge's direction: mean (judge − consensus) with its bootstrap interval, per stratum, and Kendall's τ of the
tutors' mean judge scores against their mean human scores with its interval (scipy's τ-b on the group means)."""

import numpy as np
import pytest
from scipy.stats import kendalltau

from annotation.judge_validation import direction


def test_a_uniformly_harsher_judge_shows_a_negative_mean_whose_interval_excludes_zero():
    rng = np.random.default_rng(1)
    human = {i: float(v) for i, v in enumerate(rng.integers(1, 3, size=200))}
    judge = {i: v - 1 if i % 2 else v for i, v in human.items()}  # one step lower on half the turns
    found = direction.mean_difference(judge, human)
    assert found["estimate"] == pytest.approx(-0.5) and found["n"] == 200
    assert found["low"] < -0.5 < found["high"] < 0
    assert direction.mean_difference(judge, human) == found  # seeded from the content
    same = direction.mean_difference(human, human)
    assert (same["estimate"], same["low"], same["high"]) == (0.0, 0.0, 0.0)
    empty = direction.mean_difference({}, human)
    assert empty["estimate"] is None and empty["undefined_reason"]


def test_per_stratum_the_harshness_shows_where_it_is():
    human = {i: 1.0 + (i % 2) for i in range(120)}
    strata = {i: "tutor A" if i < 60 else "tutor B" for i in human}
    judge = {i: (v - 1 if strata[i] == "tutor B" and i % 3 == 0 else v) for i, v in human.items()}
    rows = {row["stratum"]: row for row in direction.by_stratum(judge, human, strata)}
    assert set(rows) == {"tutor A", "tutor B"}
    assert rows["tutor A"]["estimate"] == 0.0 and rows["tutor A"]["high"] == 0.0
    assert rows["tutor B"]["estimate"] == pytest.approx(-20 / 60) and rows["tutor B"]["high"] < 0
    assert rows["tutor B"]["n"] == 60


def tutors_data(order_judge, seed=2):
    """Five tutors with mean human scores 0.2, 0.6, 1.0, 1.4, 1.8 (40 turns each); the judge's tutor means
    follow ``order_judge`` (a permutation of the tutors' human order)."""
    rng = np.random.default_rng(seed)
    human, judge, groups = {}, {}, {}
    for t in range(5):
        for k in range(40):
            item = t * 40 + k
            groups[item] = f"tutor {t}"
            human[item] = float(rng.normal(0.2 + 0.4 * t, 0.2))
            judge[item] = float(rng.normal(0.2 + 0.4 * order_judge[t], 0.2))
    return judge, human, groups


def test_tau_is_one_when_the_judge_ranks_the_tutors_as_the_humans_do_and_minus_one_reversed():
    same = direction.rank_agreement(*tutors_data([0, 1, 2, 3, 4]))
    assert same["estimate"] == pytest.approx(1.0) and same["n_groups"] == 5
    assert same["low"] <= same["estimate"] <= same["high"] and same["n_boot"] > 1900
    reversed_ = direction.rank_agreement(*tutors_data([4, 3, 2, 1, 0]))
    assert reversed_["estimate"] == pytest.approx(-1.0) and reversed_["high"] < 0


def test_tau_is_scipys_on_the_group_means_and_its_interval_is_reproducible():
    judge, human, groups = tutors_data([1, 0, 2, 4, 3], seed=5)
    found = direction.rank_agreement(judge, human, groups, grouping="tutor")
    names = sorted(set(groups.values()))
    judge_means = [np.mean([judge[i] for i in judge if groups[i] == n]) for n in names]
    human_means = [np.mean([human[i] for i in human if groups[i] == n]) for n in names]
    assert found["estimate"] == pytest.approx(kendalltau(judge_means, human_means).statistic, abs=1e-12)
    assert [g["judge_mean"] for g in found["groups"]] == pytest.approx(judge_means)
    assert found["low"] <= found["estimate"] <= found["high"] and found["n_boot"] > 1900
    assert direction.rank_agreement(judge, human, groups, grouping="tutor") == found


def test_tau_needs_three_groups():
    human = {i: float(i % 3) for i in range(30)}
    found = direction.rank_agreement(human, human, {i: "A" if i < 15 else "B" for i in human}, grouping="condition")
    assert found["estimate"] is None and "at least 3 conditions" in found["undefined_reason"]


def test_the_vectorised_tau_is_scipys_on_every_row_with_ties_and_nan():
    rng = np.random.default_rng(9)
    a = rng.integers(0, 3, size=(60, 5)).astype(float)
    b = rng.integers(0, 4, size=(60, 5)).astype(float)
    a[3, 2] = np.nan
    a[4] = 1.0  # all ties: undefined
    found = direction.tau_b_rows(a, b)
    for row in range(60):
        expected = np.nan if row in (3, 4) else kendalltau(a[row], b[row]).statistic
        assert found[row] == pytest.approx(expected, abs=1e-12, nan_ok=True)
