"""Formula neutralisation of CSV cells (OWASP "CSV Injection"): the one rule every CSV export writes through."""

from __future__ import annotations

from edufair_web.csv_cells import FORMULA_STARTS, neutralise_cell, neutralise_text


def test_every_formula_start_is_quoted():
    assert FORMULA_STARTS == ("=", "+", "-", "@", "\t", "\r")
    for start in ("=", "+", "-", "@", "\t", "\r"):
        assert neutralise_cell(start + "1") == "'" + start + "1"
        assert neutralise_text(start + "1") == "'" + start + "1"


def test_plain_text_is_left_alone():
    assert neutralise_cell("plain") == "plain"
    assert neutralise_text("plain") == "plain"
    assert neutralise_text("a=b") == "a=b"  # only the first character counts


def test_cell_of_any_value():
    assert neutralise_cell(-3) == "'-3"  # a negative number would run as a formula too
    assert neutralise_cell(None) == ""
    assert neutralise_cell(2.5) == "2.5"
