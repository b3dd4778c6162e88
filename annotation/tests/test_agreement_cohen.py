"""Cohen's κ (unweighted, linear, quadratic) through scikit-learn, with missing pairs and undefined cases."""

import math

import pytest
from sklearn.metrics import cohen_kappa_score

from annotation.agreement import REASON_ONE_CATEGORY, cohen_kappa

# scikit-learn, sklearn.metrics.cohen_kappa_score docstring example: κ = 0.6875.
SKLEARN_Y1 = ["negative", "positive", "negative", "neutral", "positive"]
SKLEARN_Y2 = ["negative", "positive", "negative", "neutral", "negative"]


def test_sklearn_docstring_example():
    result = cohen_kappa(SKLEARN_Y1, SKLEARN_Y2)

    assert result.value == pytest.approx(0.6875, abs=1e-12)
    assert result.statistic == "cohen_kappa"
    assert result.n_units == 5


def test_hand_computed_unweighted_kappa():
    # 2×2 table: both yes 2, both no 1, (yes, no) 1 → po = 3/4; pe = (3/4)(2/4) + (1/4)(2/4) = 1/2;
    # κ = (3/4 − 1/2) / (1 − 1/2) = 1/2.
    assert cohen_kappa(["y", "y", "y", "n"], ["y", "y", "n", "n"]).value == pytest.approx(0.5)


@pytest.mark.parametrize("weights", ["linear", "quadratic"])
def test_weighted_kappa_on_numbers_equals_sklearn(weights):
    a = [1, 2, 3, 3, 2, 1, 4, 1, 2, 4]
    b = [1, 2, 3, 4, 2, 2, 4, 1, 3, 3]

    result = cohen_kappa(a, b, weights=weights)

    assert result.statistic == f"cohen_kappa_{weights}"
    assert result.value == pytest.approx(cohen_kappa_score(a, b, weights=weights), abs=1e-12)


def test_weighted_kappa_uses_the_scale_order_not_the_alphabet():
    scale = ["low", "mid", "high"]
    a = ["low", "mid", "high", "high", "low"]
    b = ["low", "high", "high", "mid", "mid"]
    as_ranks = cohen_kappa([scale.index(v) for v in a], [scale.index(v) for v in b], weights="linear")

    result = cohen_kappa(a, b, weights="linear", labels=scale)

    assert result.value == pytest.approx(as_ranks.value, abs=1e-12)


def test_weighted_kappa_on_unordered_strings_is_refused():
    with pytest.raises(ValueError, match="labels"):
        cohen_kappa(["low", "high"], ["high", "high"], weights="quadratic")


def test_pairs_with_a_missing_side_are_dropped():
    result = cohen_kappa([*SKLEARN_Y1, None, "neutral"], [*SKLEARN_Y2, "positive", math.nan])

    assert result.value == pytest.approx(0.6875, abs=1e-12)
    assert result.n_units == 5


def test_one_category_only_is_undefined():
    result = cohen_kappa(["safe", "safe", "safe"], ["safe", "safe", "safe"])

    assert result.value is None
    assert result.undefined_reason == REASON_ONE_CATEGORY


def test_no_pair_rated_by_both_is_undefined():
    result = cohen_kappa(["safe", None], [None, "unsafe"])

    assert result.value is None
    assert result.n_units == 0


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="same length"):
        cohen_kappa(["a"], ["a", "b"])
    with pytest.raises(ValueError, match="weights"):
        cohen_kappa(["a", "b"], ["a", "b"], weights="cubic")
