"""How an audit's run ended, in words a researcher can act on: finished, finished with failures, or failed.

Pure: no Django. The stored status says whether work remains (`finished` once nothing is pending or
running); the outcome also weighs what the dialogues became, so an audit whose every dialogue failed
(an endpoint that was down) never reads as a success. Failures are grouped by cause (the error text)
and, for model calls, by host, largest group first.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

FINISHED = "finished"
FINISHED_WITH_FAILURES = "finished_with_failures"
FAILED = "failed"

LABELS = {
    "draft": "draft",
    "running": "running",
    "paused": "paused",
    "cancelled": "cancelled",
    FINISHED: "finished",
    FINISHED_WITH_FAILURES: "finished with failures",
    FAILED: "failed",
}
# How the page colours each outcome (a CSS class): success, warning, error, or neutral.
TONES = {FINISHED: "ok", FINISHED_WITH_FAILURES: "warn", FAILED: "bad"}


def run_outcome(status: str, *, done: int, failed: int) -> str:
    """The outcome of a run whose stored status is `status`, with `done` and `failed` dialogues."""
    if status != FINISHED:
        return status
    if failed and not done:
        return FAILED
    if failed:
        return FINISHED_WITH_FAILURES
    return FINISHED


@dataclass(frozen=True)
class FailureGroup:
    cause: str
    host: str
    count: int
    example_id: int | None = None


def host_of(base_url: str) -> str:
    """The host:port a model call went to ('simulation' for an endpoint without a URL)."""
    return urlsplit(base_url).netloc if base_url else "simulation"


def group_failures(rows: Iterable[tuple[str, str, int, int | None]], limit: int = 10) -> list[FailureGroup]:
    """(cause, host, count, example id) rows merged by (cause, host), largest first, at most `limit`."""
    merged: dict[tuple[str, str], list] = {}
    for cause, host, count, example in rows:
        key = (cause or "(no error recorded)", host)
        entry = merged.setdefault(key, [0, example])
        entry[0] += count
        if entry[1] is None:
            entry[1] = example
    groups = [FailureGroup(cause, host, count, example) for (cause, host), (count, example) in merged.items()]
    groups.sort(key=lambda group: (-group.count, group.cause, group.host))
    return groups[:limit]
