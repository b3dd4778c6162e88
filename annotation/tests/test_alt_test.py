"""The alt-test (Calderon, Reichart & Dror, ACL 2025) against a second, independent implementation.

The second implementation below is written from the paper's procedure with plain loops, scipy's paired
t-test (``ttest_rel``) and its own Benjamini–Yekutieli step-up — no statsmodels, nothing shared with
`annotation.alt_test` — and both must agree on ω, ρ, every p-value and every rejection on generated data.
"""

import math

import numpy as np
import pytest
from scipy.stats import ttest_rel

from annotation.alt_test import EPSILON_CROWD, EPSILON_EXPERT, AltTestResult, alt_test, one_sided_p

# --- the second implementation ----------------------------------------------------------------------


def reference_alt_test(human, judge, epsilon, q, kind, min_items):
    """Returns (omega, rho, {annotator: (p, rejected, advantage)}) for the annotators with ≥ min_items items."""
    tested = []
    for j in sorted(human):
        items = []
        for item in sorted(human[j], key=str):
            others = [human[o][item] for o in sorted(human) if o != j and item in human[o]]
            if others and item in judge:
                items.append((item, others))
        if len(items) < min_items:
            continue
        w_human, w_judge = [], []
        for item, others in items:
            if kind == "categorical":
                s_judge = sum(1 for o in others if o == judge[item]) / len(others)
                s_human = sum(1 for o in others if o == human[j][item]) / len(others)
            else:
                s_judge = -math.sqrt(sum((judge[item] - o) ** 2 for o in others) / len(others))
                s_human = -math.sqrt(sum((human[j][item] - o) ** 2 for o in others) / len(others))
            w_judge.append(1.0 if s_judge >= s_human else 0.0)
            w_human.append(1.0 if s_human >= s_judge else 0.0)
        d = [h - g for h, g in zip(w_human, w_judge, strict=True)]
        if max(d) == min(d):  # no variance: the t-test's limit
            p = 0.0 if d[0] < epsilon else 1.0
        else:
            # H1: mean(W_human − W_judge) < ε, as a paired test of (W_human − ε) against W_judge.
            p = float(ttest_rel([h - epsilon for h in w_human], w_judge, alternative="less").pvalue)
        tested.append((j, p, sum(w_judge) / len(w_judge)))
    m = len(tested)
    harmonic = sum(1.0 / k for k in range(1, m + 1))
    order = sorted(range(m), key=lambda k: tested[k][1])
    largest = 0
    for rank, k in enumerate(order, start=1):
        if tested[k][1] <= rank * q / (m * harmonic):
            largest = rank
    rejected = {tested[k][0] for k in order[:largest]}
    omega = len(rejected) / m
    rho = sum(t[2] for t in tested) / m
    return omega, rho, {j: (p, j in rejected, adv) for j, p, adv in tested}


# --- generated data ---------------------------------------------------------------------------------


def generate(seed, *, n_annotators, n_items, annotator_accuracy, judge_accuracy, kind, coverage=1.0, k=3):
    """annotator → item → label, and item → judge label. Categorical: right with the given accuracy, else
    another category; numeric: a 1–5 score plus rounded noise whose spread falls as accuracy rises."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, k, size=n_items) if kind == "categorical" else rng.integers(1, 6, size=n_items)

    def label(accuracy, i):
        if kind == "categorical":
            if rng.random() < accuracy:
                return int(truth[i])
            return int((truth[i] + rng.integers(1, k)) % k)
        return float(np.clip(truth[i] + round(rng.normal(0, 2 * (1 - accuracy))), 1, 5))

    human = {}
    for a in range(n_annotators):
        items = [i for i in range(n_items) if rng.random() < coverage]
        human[f"a{a}"] = {f"item{i}": label(annotator_accuracy, i) for i in items}
    judge = {f"item{i}": label(judge_accuracy, i) for i in range(n_items)}
    return human, judge


CASES = [
    # (seed, annotators, items, annotator accuracy, judge accuracy, kind, coverage, ε)
    (seed, 3 + seed % 4, 40 + 7 * seed, 0.75, 0.55 + 0.02 * seed, kind, 1.0 if seed % 3 else 0.8, eps)
    for seed in range(12)
    for kind, eps in (("categorical", EPSILON_EXPERT), ("numeric", EPSILON_CROWD))
]


@pytest.mark.parametrize("case", CASES)
def test_alt_test_equals_an_independent_implementation(case):
    seed, n_annotators, n_items, acc_h, acc_j, kind, coverage, eps = case
    human, judge = generate(
        seed,
        n_annotators=n_annotators,
        n_items=n_items,
        annotator_accuracy=acc_h,
        judge_accuracy=acc_j,
        kind=kind,
        coverage=coverage,
    )
    result = alt_test(human, judge, epsilon=eps, kind=kind, min_items=10)
    omega, rho, per = reference_alt_test(human, judge, eps, 0.05, kind, 10)

    assert result.omega == pytest.approx(omega, abs=1e-12)
    assert result.rho == pytest.approx(rho, abs=1e-12)
    assert result.passed == (omega >= 0.5)
    assert {row["annotator"] for row in result.per_annotator} == set(per)
    for row in result.per_annotator:
        p, rejected, advantage = per[row["annotator"]]
        assert row["p_value"] == pytest.approx(p, abs=1e-9)
        assert row["rejected"] == rejected
        assert row["advantage"] == pytest.approx(advantage, abs=1e-12)
        assert row["p_adjusted"] >= row["p_value"]


def test_the_generated_cases_include_passes_and_failures():
    outcomes = set()
    for seed, n_annotators, n_items, acc_h, acc_j, kind, coverage, eps in CASES:
        human, judge = generate(
            seed,
            n_annotators=n_annotators,
            n_items=n_items,
            annotator_accuracy=acc_h,
            judge_accuracy=acc_j,
            kind=kind,
            coverage=coverage,
        )
        outcomes.add(alt_test(human, judge, epsilon=eps, kind=kind, min_items=10).passed)
    assert outcomes == {True, False}


# --- the paper's qualitative result -----------------------------------------------------------------


def test_a_noisier_judge_fails_at_a_small_epsilon_and_passes_at_a_larger_one():
    # As in the paper's simulations: a judge somewhat less accurate than the annotators loses at ε = 0.05
    # and wins once ε grants the judge's cost advantage (here ε = 0.3).
    human, judge = generate(
        7, n_annotators=5, n_items=200, annotator_accuracy=0.8, judge_accuracy=0.7, kind="categorical"
    )

    strict = alt_test(human, judge, epsilon=0.05)
    lenient = alt_test(human, judge, epsilon=0.3)

    assert not strict.passed and strict.omega < 0.5
    assert lenient.passed and lenient.omega >= 0.5
    assert strict.rho == lenient.rho  # ρ does not depend on ε


def test_a_better_judge_passes_and_ranks_above_a_worse_one_by_rho():
    human, good = generate(
        9, n_annotators=4, n_items=120, annotator_accuracy=0.75, judge_accuracy=0.95, kind="categorical"
    )
    _, bad = generate(10, n_annotators=4, n_items=120, annotator_accuracy=0.75, judge_accuracy=0.4, kind="categorical")

    good_result, bad_result = alt_test(human, good), alt_test(human, bad)
    assert good_result.passed and not bad_result.passed
    assert good_result.rho > bad_result.rho


# --- requirements -----------------------------------------------------------------------------------


def test_two_annotators_is_an_unmet_requirement_not_an_exception():
    human, judge = generate(
        1, n_annotators=2, n_items=60, annotator_accuracy=0.8, judge_accuracy=0.99, kind="categorical"
    )
    result = alt_test(human, judge)

    assert isinstance(result, AltTestResult)
    assert not result.passed
    assert any("at least 3 annotators" in words for words in result.unmet)


def test_an_annotator_with_too_few_items_is_named_and_left_out():
    human, judge = generate(
        2, n_annotators=4, n_items=50, annotator_accuracy=0.8, judge_accuracy=0.9, kind="categorical"
    )
    human["a3"] = dict(list(human["a3"].items())[:12])
    result = alt_test(human, judge, min_items=30)

    assert [row["annotator"] for row in result.per_annotator] == ["a0", "a1", "a2"]
    assert any("annotator a3 has 12 items" in words and "at least 30" in words for words in result.unmet)
    assert not result.passed


def test_no_testable_annotator_gives_no_omega():
    human, judge = generate(
        3, n_annotators=3, n_items=10, annotator_accuracy=0.8, judge_accuracy=0.9, kind="categorical"
    )
    result = alt_test(human, judge)

    assert result.omega is None and result.rho is None and not result.passed
    assert len(result.unmet) == 3


def test_items_the_judge_did_not_score_or_nobody_else_labelled_are_left_out():
    human, judge = generate(
        4, n_annotators=3, n_items=40, annotator_accuracy=0.8, judge_accuracy=0.9, kind="categorical"
    )
    human["a0"]["solo"] = 1
    judge["item0"] = None
    result = alt_test(human, judge, min_items=5)

    assert all(row["n_items"] == 39 for row in result.per_annotator)


def test_constant_differences_use_the_t_tests_limit():
    assert one_sided_p(np.zeros(40), 0.2) == 0.0
    assert one_sided_p(np.full(40, 0.2), 0.2) == 1.0
    assert one_sided_p(np.ones(40), 0.2) == 1.0


def test_epsilon_constants_follow_the_authors_advice():
    assert EPSILON_EXPERT == 0.2 and EPSILON_CROWD == 0.1
    with pytest.raises(ValueError):
        alt_test({}, {}, kind="ranking")


def test_annotator_ids_keep_their_type():
    human, judge = generate(
        6, n_annotators=3, n_items=40, annotator_accuracy=0.8, judge_accuracy=0.9, kind="categorical"
    )
    by_user_id = {index: labels for index, labels in enumerate(human.values(), start=1)}
    result = alt_test(by_user_id, judge)

    assert [row["annotator"] for row in result.per_annotator] == [1, 2, 3]
    assert result.omega == alt_test(human, judge).omega
