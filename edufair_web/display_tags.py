"""The pages' number and time filters, built into every template: `percent`, `count`, `money`, `when`.

Numbers follow `edufair_web.display`; `when` writes a time (a datetime or an ISO 8601 string) in the site's time
zone to the minute with the zone's name ("2026-12-02 10:11 UTC"), never an ISO string with microseconds.
"""

from datetime import date, datetime

from django import template
from django.utils import timezone

from edufair_web import display

register = template.Library()


@register.filter
def percent(value, places: int = 1) -> str:
    return display.percent(value, places)


@register.filter
def count(value) -> str:
    return display.count(value)


@register.filter
def money(value, currency: str = display.AUDIT_COST_CURRENCY) -> str:
    return display.money(value, currency)


@register.filter
def when(value) -> str:
    if value is None or value == "":
        return display.UNDEFINED
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            return value
    if isinstance(value, datetime):
        if timezone.is_naive(value):
            value = timezone.make_aware(value, timezone.get_default_timezone())
        local = timezone.localtime(value)
        return f"{local:%Y-%m-%d %H:%M} {local.tzname()}"
    if isinstance(value, date):
        return value.isoformat()
    return str(value)
