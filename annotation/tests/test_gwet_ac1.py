"""Gwet's AC1/AC2: irrCAC's published examples, its weight matrices, undefined cases, the κ-paradox warning."""

import math

import numpy as np
import pytest

from annotation.agreement import REASON_NO_PAIRABLE_UNIT, fleiss_kappa
from annotation.gwet import (
    REASON_ONE_CATEGORY_ONLY,
    gwet_ac,
    gwet_ac_from_counts,
    prevalence_warning,
    weight_matrix,
)
from annotation.tests.published_ratings import CAC_RAW4RATERS

nan = math.nan

# irrCAC's cont3x3abstractors (rater 1 in rows, rater 2 in columns), as raw ratings of 100 subjects.
CONT3X3ABSTRACTORS = [[13, 0, 0], [0, 20, 7], [0, 4, 56]]
ABSTRACTORS_RAW = [[i, j] for i in range(3) for j in range(3) for _ in range(CONT3X3ABSTRACTORS[i][j])]


def test_ac1_equals_irrcac_readme_on_raw4raters():
    # Gwet's irrCAC README: gwet.ac1.raw(cac.raw4raters)$est gives coefficient 0.7754 (pa 0.8182, pe 0.1903).
    result = gwet_ac(CAC_RAW4RATERS)

    assert result.value == pytest.approx(0.7754, abs=5e-5)
    assert result.statistic == "gwet_ac1"
    assert result.n_units == 11


def test_ac1_equals_irrcac_overview_vignette_on_cont3x3abstractors():
    # irrCAC overview vignette: gwet.ac1.table(cont3x3abstractors) gives Gwet's AC1 0.8493305.
    assert gwet_ac(ABSTRACTORS_RAW).value == pytest.approx(0.8493305, abs=5e-8)


@pytest.mark.parametrize(
    ("weights", "expected"),
    [
        # irrCAC (the Python port, version 0.4.4, of Gwet's R package): CAC(raw_4raters, weights=w,
        # digits=12).gwet() — the same data and weights as the R package's weighting vignette.
        (None, 0.775444068127),
        ("linear", 0.858739136433),
        ("quadratic", 0.914000723552),
        ("ordinal", 0.898939769908),
    ],
)
def test_ac1_and_ac2_equal_irrcac_to_1e_9(weights, expected):
    assert gwet_ac(CAC_RAW4RATERS, weights=weights).value == pytest.approx(expected, abs=1e-9)


def test_weight_matrices_equal_irrcac_weighting_vignette():
    # irrCAC weighting vignette: linear.weights(1:3), quadratic.weights(1:3), ordinal.weights(1:3).
    np.testing.assert_allclose(weight_matrix([1, 2, 3], "linear"), [[1, 0.5, 0], [0.5, 1, 0.5], [0, 0.5, 1]])
    np.testing.assert_allclose(weight_matrix([1, 2, 3], "quadratic"), [[1, 0.75, 0], [0.75, 1, 0.75], [0, 0.75, 1]])
    np.testing.assert_allclose(
        weight_matrix([1, 2, 3], "ordinal"), [[1, 2 / 3, 0], [2 / 3, 1, 2 / 3], [0, 2 / 3, 1]], atol=1e-12
    )
    np.testing.assert_array_equal(weight_matrix(["a", "b"]), np.eye(2))


def test_string_categories_use_their_order():
    numeric = gwet_ac([[0, 1], [1, 1], [2, 2], [0, 0], [2, 1]], [0, 1, 2], "linear").value
    strings = gwet_ac(
        [["lo", "mid"], ["mid", "mid"], ["hi", "hi"], ["lo", "lo"], ["hi", "mid"]], ["lo", "mid", "hi"], "linear"
    )

    assert strings.value == pytest.approx(numeric, abs=1e-12)


def test_an_unused_category_changes_chance_agreement_as_irrcac_categ_labels_does():
    # With q categories given, p_e = Σ π_k(1 − π_k) / (q − 1): a third, unused category lowers p_e.
    ratings = [["a", "a"], ["a", "b"], ["b", "b"], ["a", "a"]]
    two, three = gwet_ac(ratings, ["a", "b"]).value, gwet_ac(ratings, ["a", "b", "c"]).value
    pa, pi_a = 3 / 4, 5 / 8
    assert two == pytest.approx((pa - 2 * pi_a * (1 - pi_a)) / (1 - 2 * pi_a * (1 - pi_a)), abs=1e-12)
    pe3 = (pi_a * (1 - pi_a) * 2) / 2
    assert three == pytest.approx((pa - pe3) / (1 - pe3), abs=1e-12)


def test_undefined_cases_say_why():
    assert gwet_ac([["a", None], [None, "b"]]).undefined_reason == REASON_NO_PAIRABLE_UNIT
    one = gwet_ac([["a", "a"], ["a", "a"]])
    assert one.value is None and one.undefined_reason == REASON_ONE_CATEGORY_ONLY
    assert math.isnan(gwet_ac_from_counts(np.array([[1.0, 0.0]]), np.eye(2)))


def test_rating_outside_categories_is_a_callers_mistake():
    with pytest.raises(ValueError):
        gwet_ac([["a", "z"]], ["a", "b"])


def test_ac1_stays_high_where_kappa_collapses_under_skewed_prevalence():
    # The κ paradox (Gwet 2008): 90 % agreement with 95 % of ratings in one class.
    ratings = [["yes", "yes"]] * 90 + [["yes", "no"]] * 5 + [["no", "yes"]] * 5
    kappa, ac1 = fleiss_kappa(ratings).value, gwet_ac(ratings).value

    assert kappa < 0.0 < 0.85 < ac1
    shares = {"yes": 0.95, "no": 0.05}
    warning = prevalence_warning(kappa, ac1, shares)
    assert "yes 95%" in warning and "no 5%" in warning and "κ paradox" in warning


def test_prevalence_warning_is_empty_within_the_margin_or_when_unknown():
    assert prevalence_warning(0.70, 0.85, {"a": 0.6, "b": 0.4}) == ""
    assert prevalence_warning(None, 0.9, {"a": 1.0}) == ""
    assert prevalence_warning(0.5, 0.75, {"a": 0.8, "b": 0.2}, margin=0.2) != ""
    assert "κ is the higher" in prevalence_warning(0.9, 0.5, {"a": 0.5, "b": 0.5})
