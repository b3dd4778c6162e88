"""A crowd link's places and arrival rates: when a recruit is idle, and how long a refused arrival waits.

A recruit is idle once they opened no page for the link's reservation time and hold no live main-item reservation;
an idle recruit gives their place back. Arrival rates read "N/second|minute|hour|day"."""

from __future__ import annotations

import math
from datetime import datetime, timedelta

PERIODS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def is_idle(*, last_seen: datetime, holds_live_reservation: bool, now: datetime, reservation: timedelta) -> bool:
    """Idle: no page opened for the reservation time and no main item reserved that is still live."""
    return not holds_live_reservation and last_seen < now - reservation


def rate_parse(rate: str | None) -> tuple[int, int] | None:
    """(requests, seconds) of a rate such as ``30/minute``; None when the rate is off."""
    if not rate:
        return None
    count, _, period = rate.partition("/")
    return int(count), PERIODS[period.strip()[:1].lower()]


def wait_seconds(*, recent: list[datetime], limit: int, period: int, now: datetime) -> int:
    """0 when another arrival fits in the window of ``period`` seconds, else the whole seconds until the oldest of
    the ``recent`` arrivals (those in the window) leaves it."""
    if len(recent) < limit:
        return 0
    leaves = sorted(recent)[len(recent) - limit] + timedelta(seconds=period)
    return max(1, math.ceil((leaves - now).total_seconds()))
