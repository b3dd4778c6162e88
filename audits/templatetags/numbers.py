"""Numbers as the pages show them: `num` ("—" when undefined), `p_value_text`, and `tone` (their colour class)."""

import math

from django import template
from django.template.defaultfilters import floatformat

from audits.effect_tone import LEGEND, effect_tone
from audits.fairness import P_VALUE_NAMES

register = template.Library()

UNDEFINED = "—"


@register.filter
def num(value, places: int = 3) -> str:
    if value is None or value == "":
        return UNDEFINED
    try:
        number = float(value)
    except (TypeError, ValueError):
        return UNDEFINED
    if math.isnan(number):
        return UNDEFINED
    return floatformat(number, places)


@register.filter
def p_value_text(name: str) -> str:
    """What the p-value called ``name`` (p_exact, p_normal, p_adjusted) is, for a header's title."""
    return P_VALUE_NAMES.get(name, "")


@register.simple_tag
def tone(value, ci_low=None, ci_high=None, directed: bool = True) -> str:
    """The CSS class of a number by `audits.effect_tone`'s rule: grey when its CI spans 0, else red or blue by sign."""
    return effect_tone(_number(value), _number(ci_low), _number(ci_high), directed=directed)


@register.simple_tag
def tone_legend() -> str:
    return LEGEND


def _number(value) -> float | None:
    try:
        return None if value is None or value == "" else float(value)
    except (TypeError, ValueError):
        return None
