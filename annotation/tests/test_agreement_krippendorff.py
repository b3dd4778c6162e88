"""Krippendorff's α against Krippendorff's own worked example, and its undefined cases."""

import math

import pytest

from annotation.agreement import REASON_NO_PAIRABLE_UNIT, REASON_ONE_CATEGORY, krippendorff_alpha

nan = math.nan

# Krippendorff, K. (2011). "Computing Krippendorff's Alpha-Reliability", Annenberg School for
# Communication, University of Pennsylvania, section C: 4 coders (rows) × 12 units (columns), missing values
# shown as "." in the paper. Reported: α nominal 0.743, ordinal 0.815, interval 0.849.
KRIPPENDORFF_2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
    [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
]


@pytest.mark.parametrize(("level", "expected"), [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849)])
def test_krippendorff_2011_reference_values(level, expected):
    result = krippendorff_alpha(KRIPPENDORFF_2011, level)

    assert result.is_defined
    assert result.value == pytest.approx(expected, abs=5e-4)
    assert result.statistic == f"krippendorff_alpha_{level}"
    # Unit 12 has one rating only, so 11 units are pairable.
    assert result.n_units == 11


def test_none_is_missing_like_nan():
    with_none = [[None if isinstance(v, float) and math.isnan(v) else v for v in row] for row in KRIPPENDORFF_2011]

    assert krippendorff_alpha(with_none, "nominal").value == pytest.approx(0.743, abs=5e-4)


def test_string_categories_nominal_equal_numeric_codes():
    names = {1: "a", 2: "b", 3: "c", 4: "d", 5: "e"}
    as_strings = [[None if isinstance(v, float) else names[v] for v in row] for row in KRIPPENDORFF_2011]

    assert krippendorff_alpha(as_strings, "nominal").value == pytest.approx(0.743, abs=5e-4)


def test_string_categories_ordinal_use_the_given_scale_order():
    # Same data on a named ordinal scale; the scale's order (not the alphabet) must be used.
    scale = ["very low", "low", "mid", "high", "very high"]
    as_strings = [[None if isinstance(v, float) else scale[v - 1] for v in row] for row in KRIPPENDORFF_2011]

    result = krippendorff_alpha(as_strings, "ordinal", value_domain=scale)

    assert result.value == pytest.approx(0.815, abs=5e-4)


def test_ordinal_strings_without_a_scale_are_refused():
    with pytest.raises(ValueError, match="value_domain"):
        krippendorff_alpha([["low", "high"], ["low", "low"]], "ordinal")


def test_interval_needs_numbers():
    with pytest.raises(ValueError, match="numeric"):
        krippendorff_alpha([["low", "high"], ["low", "low"]], "interval")


def test_unknown_level_is_refused():
    with pytest.raises(ValueError, match="level"):
        krippendorff_alpha(KRIPPENDORFF_2011, "cardinal")


def test_one_category_only_is_undefined():
    result = krippendorff_alpha([[1, 1, 1], [1, 1, nan]], "nominal")

    assert not result.is_defined
    assert result.value is None
    assert result.undefined_reason == REASON_ONE_CATEGORY
    assert result.n_units == 2


def test_second_category_only_in_a_single_rated_unit_is_still_undefined():
    # Unit 3's "2" has nobody to be compared with, so the pairable ratings hold one value only.
    result = krippendorff_alpha([[1, 1, 2], [1, 1, nan]], "interval")

    assert result.undefined_reason == REASON_ONE_CATEGORY


def test_no_unit_with_two_ratings_is_undefined():
    result = krippendorff_alpha([[1, nan, 3], [nan, 2, nan]], "nominal")

    assert result.value is None
    assert result.undefined_reason == REASON_NO_PAIRABLE_UNIT
    assert result.n_units == 0


def test_not_a_matrix_is_refused():
    with pytest.raises(ValueError, match="two-dimensional"):
        krippendorff_alpha([1, 2, 3], "nominal")
