"""How the pages write numbers and times (edufair_web.display, edufair_web.display_tags): a rate as a percentage like
the thresholds beside it, counts with separators, a cost with its currency, a time to the minute in the site's zone."""

from datetime import UTC, datetime

import pytest
from django.template import Context, Template
from django.test import override_settings

from edufair_web import display


@pytest.mark.parametrize(
    ("fraction", "shown"), [(0.9333, "93.3%"), (0.8, "80%"), (1, "100%"), (0, "0%"), (None, "—"), ("", "—")]
)
def test_a_rate_reads_as_a_percentage_like_its_threshold(fraction, shown):
    assert display.percent(fraction) == shown


@pytest.mark.parametrize(
    ("value", "shown"), [(1234567, "1,234,567"), (999, "999"), (12345.0, "12,345"), ("12345", "12,345"), (None, "—")]
)
def test_counts_carry_thousands_separators(value, shown):
    assert display.count(value) == shown


@pytest.mark.parametrize(
    ("amount", "shown"),
    [
        (0, "$0"),
        (0.0, "$0"),
        (0.00001, "< $0.0001"),
        (0.00123, "$0.0012"),
        (0.5, "$0.50"),
        (1234.5, "$1,234.50"),
        (None, "—"),
    ],
)
def test_a_cost_carries_its_currency_and_a_sensible_precision(amount, shown):
    assert display.money(amount) == shown


def test_a_currency_without_a_symbol_follows_the_number():
    assert display.money(12.5, "chf") == "12.50 CHF"
    assert display.money(12.5, "EUR") == "€12.50"


def render(text: str, **context) -> str:
    return Template(text).render(Context(context))


def test_every_template_has_the_filters_without_loading_them():
    assert render("{{ r|percent }} {{ n|count }} {{ c|money }}", r=0.933, n=12345, c=0.0012) == "93.3% 12,345 $0.0012"


@override_settings(TIME_ZONE="Europe/Berlin")
def test_a_time_reads_in_the_sites_zone_to_the_minute_from_a_datetime_or_an_iso_string():
    moment = datetime(2026, 12, 2, 10, 11, 12, 123456, tzinfo=UTC)
    assert render("{{ t|when }}", t=moment) == "2026-12-02 11:11 CET"
    assert render("{{ t|when }}", t="2026-12-02T10:11:12.123456+00:00") == "2026-12-02 11:11 CET"
    assert render("{{ t|when }}", t=None) == "—"
    assert render("{{ t|when }}", t="not a time") == "not a time"
