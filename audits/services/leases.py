"""Claim, renew and release a leased job (`audits.models.leased_job.LeasedJob`), and keep its lease while it runs.

A worker claims rows by compare-and-swap (`UPDATE … WHERE status IN (…) OR (status = running AND lease_until < now)`),
writing its token and a lease; only the holder of the token renews the lease or writes the job's end, so work is never
done twice. A row whose worker died keeps its token until the lease runs out; the next claim takes it over. Analyses,
dialogue batches and judging runs claim through these functions; the lease lengths and the statuses a claim takes
stay with each job.
"""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from typing import Any

from django.db import connection
from django.db.models import F, Q, QuerySet
from django.utils import timezone

from audits.services.database_outage import OUTAGE_ERRORS, drop_connection

RUNNING = "running"


class ClaimLost(RuntimeError):
    """The job's claim is no longer this worker's: its lease ran out and another worker took the job over."""


def lease_token(worker: str = "") -> str:
    """A fresh claim token: the worker's name (shown where the job is) and a random part, or the random part alone."""
    return f"{worker}:{uuid.uuid4().hex[:12]}" if worker else uuid.uuid4().hex


def lease_claimable(statuses: Iterable[str], now: datetime, *, running: str = RUNNING) -> Q:
    """Rows a worker may claim: in one of `statuses`, or running under a lease that ran out (its worker died).
    A running row without a lease is never taken over."""
    return Q(status__in=list(statuses)) | Q(status=running, lease_until__lt=now)


def lease_claim(
    jobs: QuerySet, *, token: str, seconds: float, statuses: Iterable[str], running: str = RUNNING, **values: Any
) -> int:
    """Claim every claimable row of `jobs` in one UPDATE: running, under `token`, leased for `seconds`, one more
    run, started now, with `values` written too. Returns the rows claimed (0: another worker holds them, or they
    are done)."""
    now = timezone.now()
    return jobs.filter(lease_claimable(statuses, now, running=running)).update(
        status=running,
        claim_token=token,
        lease_until=now + timedelta(seconds=seconds),
        runs=F("runs") + 1,
        started_at=now,
        **values,
    )


def lease_claim_ids(
    jobs: QuerySet, *, token: str, seconds: float, statuses: Iterable[str], running: str = RUNNING, **values: Any
) -> set:
    """`lease_claim` of every claimable row of `jobs` in one UPDATE, then the primary keys `token` now holds among
    them. Safe to run again (the token is the claim's): a claim whose answer was lost is found, not repeated."""
    lease_claim(jobs, token=token, seconds=seconds, statuses=statuses, running=running, **values)
    return set(jobs.filter(claim_token=token, status=running).values_list("pk", flat=True))


def lease_renew(jobs: QuerySet, *, token: str, seconds: float, running: str = RUNNING, **values: Any) -> int:
    """Extend the lease of the running rows of `jobs` `token` holds (and write `values`); returns how many."""
    return jobs.filter(claim_token=token, status=running).update(
        lease_until=timezone.now() + timedelta(seconds=seconds), **values
    )


def lease_hold(jobs: QuerySet, *, token: str, seconds: float, what: str, running: str = RUNNING, **values: Any) -> None:
    """Renew the lease of the one job `jobs` selects (writing `values`); ClaimLost, naming the job as `what`,
    when `token` no longer holds it."""
    if lease_renew(jobs, token=token, seconds=seconds, running=running, **values) != 1:
        raise ClaimLost(f"{what} was claimed by another worker")


def lease_release(jobs: QuerySet, *, token: str, running: str | None = RUNNING, **values: Any) -> int:
    """End the claim of the rows of `jobs` `token` holds (still running, unless `running` is None): the lease is
    dropped and `values` (the job's end: its status, result or error) written. Returns the rows released; 0 means
    the claim was lost and nothing was written."""
    held = jobs.filter(claim_token=token)
    if running is not None:
        held = held.filter(status=running)
    return held.update(lease_until=None, **values)


def lease_soonest(jobs: QuerySet, *, running: str = RUNNING) -> datetime | None:
    """When the earliest lease of the running rows of `jobs` runs out (a sweep waits until then), or None."""
    return jobs.filter(status=running).order_by("lease_until").values_list("lease_until", flat=True).first()


class LeaseKeeper:
    """Renews a claim every `every` seconds while the work runs: on a thread of its own (`with keeper:`, for work that
    blocks) or as a task on an event loop (`keep_on(runtime)`). `renew()` returns the rows it renewed; none means the
    claim was lost (`check()` then raises ClaimLost), unless `many`: a batch's token holds rows it claims over time,
    and a moment holding none loses nothing. A database outage is waited out: the next renewal tries again."""

    def __init__(self, renew: Callable[[], int], *, every: float, name: str = "lease", many: bool = False) -> None:
        self.renew, self.every, self.name, self.many = renew, every, name, many
        self.lost = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)

    def _renewed(self) -> bool:
        """One renewal; False once the claim is lost."""
        if not self.renew() and not self.many:
            self.lost.set()
            return False
        return True

    def _loop(self) -> None:
        try:
            while not self._stop.wait(self.every):
                try:
                    if not self._renewed():
                        return
                except OUTAGE_ERRORS:
                    drop_connection()
        finally:
            connection.close()  # this thread's own connection

    def check(self) -> None:
        if self.lost.is_set():
            raise ClaimLost(f"{self.name}: the claim was taken over")

    def __enter__(self) -> LeaseKeeper:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(5)

    async def keep_on(self, runtime) -> None:
        """Renew on `runtime`'s database thread until cancelled (or the claim is lost)."""
        while True:
            await asyncio.sleep(self.every)
            try:
                if not await runtime.run_blocking(self._renewed):
                    return
            except OUTAGE_ERRORS:
                await runtime.run_blocking(drop_connection)
