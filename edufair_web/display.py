"""How a page writes a number: a rate as a percentage, a count with separators, a cost with its currency (pure).

One rule each, used by the template filters of `edufair_web.display_tags` on every page; exports (CSV, JSON, the
API) keep the raw numbers.
"""

import math
from decimal import Decimal

UNDEFINED = "—"

# The currency of an endpoint's prices (per million tokens), so of every audit cost.
AUDIT_COST_CURRENCY = "USD"

_SYMBOLS = {"USD": "$", "EUR": "€", "GBP": "£"}


def _number(value) -> float | None:
    if value is None or value == "" or isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(number) or math.isinf(number) else number


def percent(fraction, places: int = 1) -> str:
    """A rate in [0, 1] as a percentage ("93.3%"; a whole one without decimals, "80%"), the unit every
    threshold it is compared with is written in; "—" when undefined."""
    number = _number(fraction)
    if number is None:
        return UNDEFINED
    text = f"{number * 100:.{places}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return f"{text}%"


def count(value) -> str:
    """A whole number with thousands separators ("12,345"); a value that is not a number is shown as it is."""
    if isinstance(value, bool) or value is None or value == "":
        return UNDEFINED if value in (None, "") else str(value)
    if isinstance(value, int):
        return f"{value:,}"
    number = _number(value)
    if number is None:
        return str(value)
    if number.is_integer():
        return f"{int(number):,}"
    return f"{number:,.1f}"


def money(amount, currency: str = AUDIT_COST_CURRENCY) -> str:
    """An amount with its currency: "$0" for zero, "< $0.0001" for a tiny non-zero amount, up to four
    decimals below one unit ("$0.0012", "$0.50"), cents above ("$1,234.56"); a currency without a symbol is written
    after the number ("12.50 CHF"); "—" when undefined."""
    number = _number(amount)
    if number is None:
        return UNDEFINED
    code = (currency or AUDIT_COST_CURRENCY).upper()
    symbol = _SYMBOLS.get(code)

    def written(text: str) -> str:
        return f"{symbol}{text}" if symbol else f"{text} {code}"

    sign = "−" if number < 0 else ""
    size = abs(number)
    if size == 0:
        return written("0")
    if size < 0.0001:
        return f"{sign}< {written('0.0001')}"
    if size < 1:
        whole, _, decimals = f"{Decimal(str(round(size, 4))):f}".partition(".")
        text = f"{whole}.{decimals.rstrip('0').ljust(2, '0')}"
    else:
        text = f"{size:,.2f}"
    return sign + written(text)
