"""`num`: a number as the pages show it — rounded to the given places, "—" when it is undefined (None or NaN)."""

import math

from django import template
from django.template.defaultfilters import floatformat

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
