"""Percent agreement with gold labels under the two "Unsure" rules, with coverage."""

import pytest

from annotation.agreement import REASON_NOTHING_TO_COMPARE, UNSURE, gold_agreement

GOLD = ["safe", "unsafe", "safe", "unsafe", "safe"]
# Matches on items 1 and 2, a wrong answer on item 3, Unsure on item 4, item 5 not answered.
LABELS = ["safe", "unsafe", "unsafe", UNSURE, None]


def test_strict_counts_unsure_as_a_miss():
    result = gold_agreement(LABELS, GOLD, unsure="strict")

    assert result.value == pytest.approx(2 / 4)
    assert result.n_units == 4
    assert result.coverage == pytest.approx(4 / 5)
    assert result.statistic == "gold_agreement_strict"


def test_exclude_leaves_unsure_out_and_reports_coverage():
    result = gold_agreement(LABELS, GOLD, unsure="exclude")

    assert result.value == pytest.approx(2 / 3)
    assert result.n_units == 3
    assert result.coverage == pytest.approx(3 / 5)


def test_strict_unsure_is_a_miss_even_against_an_unsure_gold():
    assert gold_agreement([UNSURE], [UNSURE], unsure="strict").value == 0.0


def test_perfect_agreement_is_one():
    result = gold_agreement(GOLD, GOLD)

    assert result.value == 1.0
    assert result.coverage == 1.0


def test_a_custom_unsure_value():
    result = gold_agreement(["a", "?"], ["a", "b"], unsure="exclude", unsure_value="?")

    assert result.value == 1.0
    assert result.coverage == 0.5


def test_all_unsure_under_exclude_is_undefined_with_zero_coverage():
    result = gold_agreement([UNSURE, UNSURE], ["safe", "unsafe"], unsure="exclude")

    assert result.value is None
    assert result.undefined_reason == REASON_NOTHING_TO_COMPARE
    assert result.coverage == 0.0


def test_no_gold_items_is_undefined():
    result = gold_agreement([], [])

    assert result.value is None
    assert result.coverage is None


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="unsure"):
        gold_agreement(GOLD, GOLD, unsure="lenient")
    with pytest.raises(ValueError, match="same length"):
        gold_agreement(GOLD[:2], GOLD)
    with pytest.raises(ValueError, match="gold label"):
        gold_agreement(["safe"], [None])
