"""Fleiss' κ: Fleiss (1971) as tabulated on Wikipedia, statsmodels equality, unequal raters per item."""

import math
from fractions import Fraction

import numpy as np
import pytest
from statsmodels.stats.inter_rater import fleiss_kappa as statsmodels_fleiss_kappa

from annotation.agreement import (
    REASON_NO_PAIRABLE_UNIT,
    REASON_ONE_CATEGORY,
    _fleiss_kappa_unequal,
    fleiss_kappa,
    fleiss_kappa_from_counts,
)
from annotation.tests.published_ratings import CAC_RAW4RATERS

nan = math.nan

# Wikipedia, "Fleiss' kappa", worked example (the data of Fleiss 1971 as tabulated there): 10 subjects,
# 14 raters each, 5 categories; rows give how many raters chose each category. Reported κ = 0.210.
WIKIPEDIA_FLEISS_COUNTS = [
    [0, 0, 0, 0, 14],
    [0, 2, 6, 4, 2],
    [0, 0, 3, 5, 6],
    [0, 3, 9, 2, 0],
    [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0],
    [3, 2, 6, 3, 0],
    [2, 5, 3, 2, 2],
    [6, 5, 2, 1, 0],
    [0, 2, 2, 3, 7],
]


def ratings_from_counts(counts):
    """Units × raters: each unit's ratings listed category by category (raters are interchangeable)."""
    return [[category for category, n in enumerate(row, start=1) for _ in range(n)] for row in counts]


def test_wikipedia_fleiss_1971_example_from_counts():
    result = fleiss_kappa_from_counts(WIKIPEDIA_FLEISS_COUNTS)

    assert result.value == pytest.approx(0.210, abs=5e-4)
    assert result.n_units == 10


def test_wikipedia_fleiss_1971_example_from_ratings():
    result = fleiss_kappa(ratings_from_counts(WIKIPEDIA_FLEISS_COUNTS))

    assert result.value == pytest.approx(0.210, abs=5e-4)
    assert result.statistic == "fleiss_kappa"


def test_equal_raters_equals_statsmodels_on_the_count_table():
    rng = np.random.default_rng(7)
    ratings = rng.choice(["a", "b", "c"], size=(40, 3), p=[0.6, 0.3, 0.1])
    counts = np.array([[int((row == c).sum()) for c in ("a", "b", "c")] for row in ratings])

    assert fleiss_kappa(ratings).value == pytest.approx(statsmodels_fleiss_kappa(counts, method="fleiss"), abs=1e-12)


def test_the_generalisation_reduces_to_fleiss_when_raters_are_equal():
    # The unequal-raters formula must agree with statsmodels where both apply, so switching between the
    # two paths (e.g. when one extra label arrives) is continuous.
    counts = np.array(WIKIPEDIA_FLEISS_COUNTS, dtype=float)

    assert _fleiss_kappa_unequal(counts) == pytest.approx(statsmodels_fleiss_kappa(counts), abs=1e-12)


def test_unequal_raters_match_a_hand_computation():
    ratings = [
        ["A", "A", "A"],  # n=3, P = 3·2 / (3·2) = 1;  shares A 1,   B 0
        ["A", "B", None],  # n=2, P = 0;                shares A 1/2, B 1/2
        ["B", "B", nan],  # n=2, P = 2·1 / (2·1) = 1;  shares A 0,   B 1
        ["A", None, None],  # n=1, no P (cannot agree);  shares A 1,   B 0
        [None, nan, None],  # no rating: ignored entirely
    ]
    observed = (Fraction(1) + 0 + 1) / 3  # mean P over the 3 units with ≥ 2 ratings = 2/3
    share_a = (Fraction(1) + Fraction(1, 2) + 0 + 1) / 4  # mean over the 4 rated units = 5/8
    share_b = 1 - share_a  # 3/8
    chance = share_a**2 + share_b**2  # 25/64 + 9/64 = 17/32
    expected = (observed - chance) / (1 - chance)  # (13/96) / (15/32) = 13/45
    assert expected == Fraction(13, 45)

    result = fleiss_kappa(ratings)

    assert result.value == pytest.approx(float(expected), abs=1e-12)
    assert result.n_units == 3


def test_unequal_raters_match_irrcac_on_krippendorffs_data():
    # Gwet's irrCAC R package README: fleiss.kappa.raw(cac.raw4raters) — Krippendorff's (2011) 12 units
    # rated by 4 raters with missing ratings — gives pa 0.8181818, pe 0.2387153, Fleiss' kappa 0.76117.

    assert fleiss_kappa(CAC_RAW4RATERS).value == pytest.approx(0.76117, abs=5e-6)


def test_one_category_only_is_undefined():
    result = fleiss_kappa(
        [
            ["yes", "yes"],
            [
                "yes",
                "yes",
            ],
            ["yes", None],
        ]
    )

    assert result.value is None
    assert result.undefined_reason == REASON_ONE_CATEGORY


def test_no_unit_with_two_ratings_is_undefined():
    result = fleiss_kappa([["yes", None], [None, "no"], [None, None]])

    assert result.value is None
    assert result.undefined_reason == REASON_NO_PAIRABLE_UNIT
    assert result.n_units == 0


def test_empty_counts_are_undefined_not_an_error():
    assert fleiss_kappa_from_counts(np.zeros((0, 2))).undefined_reason == REASON_NO_PAIRABLE_UNIT


def test_negative_counts_are_refused():
    with pytest.raises(ValueError, match="negative"):
        fleiss_kappa_from_counts([[2, -1], [1, 1]])


def test_unsure_and_numbers_mixed_are_categories():
    # Mixed types must not crash on sorting: "unsure" is just another category, as a third code would be.
    mixed = fleiss_kappa([[1, 1], [2, "unsure"], [2, 2], [1, 2]])
    coded = fleiss_kappa([[1, 1], [2, 3], [2, 2], [1, 2]])

    assert mixed.value == pytest.approx(coded.value, abs=1e-12)
