"""CSV cells a spreadsheet cannot run as a formula (OWASP "CSV Injection").

A cell whose text starts with = + - @, a tab or a carriage return is prefixed with an apostrophe, which
spreadsheets show as text. Every CSV the app offers writes its text cells through this module.
"""

from __future__ import annotations

from typing import Any

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def neutralise_text(text: str) -> str:
    """The text, prefixed with an apostrophe when a spreadsheet would read it as a formula."""
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def neutralise_cell(value: Any) -> str:
    """Any value as CSV text that cannot run as a formula (None is empty; a negative number is quoted too)."""
    return neutralise_text("" if value is None else str(value))
