"""A database that goes away for a moment (a restart, a failover): the engine's work waits it out, never fails for it.

A lost connection is not a dialogue's fault. The engine's database work on its runtime thread (ledger rounds, a
dialogue's write) is tried again on a fresh connection after a short wait (`OUTAGE_WAITS`, about 15 s in all: longer
than a PostgreSQL restart). What still cannot reach the database is left to the claim's lease: the dialogue is taken
up again once the database is back, with every answer already in the ledger served from it, and is never marked failed
for the outage.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TypeVar

from django.db import InterfaceError, OperationalError, connection

logger = logging.getLogger(__name__)

T = TypeVar("T")

# The errors a lost or refused connection raises (psycopg's and SQLite's, as Django wraps them).
OUTAGE_ERRORS = (OperationalError, InterfaceError)
# Seconds between tries: 15.5 s in all.
OUTAGE_WAITS = (0.5, 1.0, 2.0, 4.0, 8.0)


def through_outage(function: Callable[..., T], *args) -> T:
    """`function(*args)` on this thread; on a lost connection, drop it and try again after each wait in turn, then
    raise the last error. Inside a transaction it raises at once: only the outermost caller can start it again."""
    for wait in OUTAGE_WAITS:
        try:
            return function(*args)
        except OUTAGE_ERRORS as exc:
            if connection.in_atomic_block:
                raise
            logger.warning("database unreachable (%s); trying again in %.1f s", str(exc).strip()[:200], wait)
            drop_connection()
            time.sleep(wait)
    return function(*args)


def drop_connection() -> None:
    """Close this thread's connection (a broken one raises on every query until closed); the next query opens one."""
    try:
        connection.close()
    except OUTAGE_ERRORS:
        logger.debug("closing a broken connection raised", exc_info=True)
