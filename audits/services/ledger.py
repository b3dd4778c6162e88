"""The ledger on the LLMCall table, its reads and writes grouped: one query and one commit per round.

Every model call reads the ledger before it is sent and writes it after it is answered. Done one call
at a time, the database thread's per-statement cost and a commit per answer were the engine's largest
cost per call after the HTTP client itself (benchmarks/RESULTS.md, engine throughput). Here an operation
joins the round that is waiting for the database thread, or sends a new round when none is waiting: so a
lone call goes at once, an operation never waits behind a round that started after it was asked for, and
everything asked while the thread is busy goes in one round: the writes in one transaction (one
`bulk_create` for new rows), then the marks of unusable answers, then the reads in one `IN (…)` query.

Order within a round keeps what one call sees exactly as before: a write or mark is applied before a
read in the same round. A round whose grouped write fails (another process inserted one of its keys in
the same instant) is redone row by row, as the ungrouped ledger did. A round that loses its connection is applied
again once the database answers (`audits.services.database_outage`): an answer received is never lost to an outage.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import threading
from dataclasses import dataclass, field

from django.db import IntegrityError, transaction
from django.db.models import F

from audits.llm.calls import STATUS_OK, STATUS_UNPARSABLE, CallRequest, CallResult
from audits.llm.runtime import LoopRuntime
from audits.models import LLMCall
from audits.services.database_outage import through_outage
from audits.services.progress_tally import count_new_calls, counted_call_change

logger = logging.getLogger(__name__)

LOOKUP_CHUNK = 500  # keys per IN (…) query
# Rounds queued on the database thread from which new operations join the waiting round instead of queueing
# one more (benchmarks/RESULTS.md: grouping always cost 7 % at 64 calls in flight, 200 ms; it nearly doubles
# the calls per second at 256 in flight, 50 ms).
GROUP_FROM_PENDING = 4
_READ = ("pk", "request_hash", "status", "response_text", "prompt_tokens", "completion_tokens", "reported_model")


@dataclass
class _Round:
    records: list[tuple[CallRequest, str, CallResult, list[dict], asyncio.Future]] = field(default_factory=list)
    rejects: list[tuple[int, str, asyncio.Future]] = field(default_factory=list)
    lookups: dict[str, list[asyncio.Future]] = field(default_factory=dict)
    # Set by the database thread when it starts the round; from then on nothing joins it.
    started: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)


class DatabaseLedger:
    """`audits.llm.calls.Ledger` on the database, grouped per round on the runtime's database thread."""

    def __init__(self, runtime: LoopRuntime) -> None:
        self.runtime = runtime
        self._waiting: _Round | None = None  # the round sent to the database thread and not started yet
        self._pending = 0  # rounds sent and not finished
        self.rounds = 0  # rounds sent to the database (for tests and benchmarks)

    async def lookup(self, request_hash: str) -> CallResult | None:
        future = self._future()
        self._join(lambda batch: batch.lookups.setdefault(request_hash, []).append(future))
        return await future

    async def record(self, request: CallRequest, request_hash: str, result: CallResult, attempt_log: list[dict]) -> int:
        future = self._future()
        self._join(lambda batch: batch.records.append((request, request_hash, result, attempt_log, future)))
        return await future

    async def reject(self, call_id: int, problem: str) -> None:
        future = self._future()
        self._join(lambda batch: batch.rejects.append((call_id, problem, future)))
        await future

    @staticmethod
    def _future() -> asyncio.Future:
        return asyncio.get_running_loop().create_future()

    def _join(self, add) -> None:
        """Add to the round waiting for the database thread, or send a new one: an operation never waits for
        a round that started after it was asked for, and operations asked while the thread is busy share one."""
        waiting = self._waiting
        # Light load: every operation its own round, answered as soon as it is done. Once rounds queue up
        # (the thread is the bottleneck), operations share the waiting round.
        if waiting is not None and self._pending >= GROUP_FROM_PENDING:
            with waiting.lock:
                if not waiting.started:
                    add(waiting)
                    return
        batch = _Round()
        add(batch)
        self._waiting = batch
        self.rounds += 1
        self._pending += 1
        done = asyncio.get_running_loop().run_in_executor(self.runtime.blocking, _start_round, batch)
        done.add_done_callback(lambda finished: self._finished(batch, finished))

    def _finished(self, batch: _Round, finished: asyncio.Future) -> None:
        self._pending -= 1
        _settle_round(batch, finished)


def _settle_round(batch: _Round, finished: asyncio.Future) -> None:
    """On the loop, once the database thread is done with the round: every waiter gets its answer (or the
    round's exception: none hangs)."""
    if finished.cancelled() or finished.exception() is not None:
        error = asyncio.CancelledError() if finished.cancelled() else finished.exception()
        for future in _futures(batch):
            if not future.done():
                future.set_exception(error)
        return
    record_ids, found = finished.result()
    for (_, _, _, _, future), row_id in zip(batch.records, record_ids, strict=True):
        _settle(future, row_id)
    for _, _, future in batch.rejects:
        _settle(future, None)
    for key, futures in batch.lookups.items():
        for future in futures:
            _settle(future, found.get(key))


def _settle(future: asyncio.Future, value) -> None:
    if future.done():  # its caller was cancelled meanwhile
        return
    # A row read once may answer several waiters: each gets its own CallResult.
    future.set_result(dataclasses.replace(value) if isinstance(value, CallResult) else value)


def _futures(batch: _Round):
    yield from (item[-1] for item in batch.records)
    yield from (item[-1] for item in batch.rejects)
    for futures in batch.lookups.values():
        yield from futures


# --- on the database thread ----------------------------------------------------------------------


def _start_round(batch: _Round) -> tuple[list[int], dict[str, CallResult]]:
    with batch.lock:
        batch.started = True  # what joined until now is the round
    # A round is safe to apply again: its writes are one transaction (a commit whose answer was lost meets its own
    # keys and takes the known-key path), its marks and reads change nothing twice.
    return through_outage(_apply_round, batch)


def _apply_round(batch: _Round) -> tuple[list[int], dict[str, CallResult]]:
    record_ids = _record_many([item[:4] for item in batch.records]) if batch.records else []
    if batch.rejects:
        with transaction.atomic():
            for call_id, problem, _ in batch.rejects:
                _reject(call_id, problem)
    found = _lookup_many(list(batch.lookups)) if batch.lookups else {}
    return record_ids, found


def _lookup_many(keys: list[str]) -> dict[str, CallResult]:
    found: dict[str, CallResult] = {}
    for start in range(0, len(keys), LOOKUP_CHUNK):
        rows = LLMCall.objects.filter(
            request_hash__in=keys[start : start + LOOKUP_CHUNK], status__in=[STATUS_OK, STATUS_UNPARSABLE]
        ).values(*_READ)
        for row in rows:
            found[row["request_hash"]] = CallResult(
                ok=row["status"] == STATUS_OK,
                text=row["response_text"],
                call_id=row["pk"],
                cached=True,
                prompt_tokens=row["prompt_tokens"],
                completion_tokens=row["completion_tokens"],
                status=row["status"],
                reported_model=row["reported_model"],
            )
    return found


def _reject(call_id: int, problem: str) -> None:
    with counted_call_change([call_id]):
        LLMCall.objects.filter(pk=call_id, status=LLMCall.Status.OK).update(
            status=LLMCall.Status.UNPARSABLE, error=f"unparsable: {problem}"[:2000]
        )


def _values(request: CallRequest, result: CallResult, attempt_log: list[dict]) -> dict:
    return {
        "endpoint_id": request.endpoint.endpoint_id,
        "purpose": request.purpose,
        "model": request.endpoint.model,
        "reported_model": result.reported_model[:200],
        "request": request.stored_request(),
        "response_text": result.text,
        "status": LLMCall.Status.OK if result.ok else LLMCall.Status.FAILED,
        "attempt_log": attempt_log,
        "error": result.error,
        "prompt_tokens": result.prompt_tokens,
        "completion_tokens": result.completion_tokens,
        "latency_ms": result.latency_ms,
        "reasoning": result.reasoning,
        "reasoning_tokens": result.reasoning_tokens,
        "finish_reason": result.finish_reason[:20],
    }


def _record_many(items: list[tuple[CallRequest, str, CallResult, list[dict]]]) -> list[int]:
    """Row ids of the items, in order: new keys in one bulk insert, known keys one by one, all in one
    transaction; redone row by row if another process inserted one of the keys meanwhile."""
    keys = [key for _, key, _, _ in items]
    if len(set(keys)) == len(keys):
        try:
            with transaction.atomic():
                known = set(LLMCall.objects.filter(request_hash__in=keys).values_list("request_hash", flat=True))
                new = [
                    LLMCall(
                        request_hash=key,
                        attempts=result.attempts,
                        first_audit_id=request.origin.get("audit_id"),
                        **_values(request, result, log),
                    )
                    for request, key, result, log in items
                    if key not in known
                ]
                LLMCall.objects.bulk_create(new)
                count_new_calls(new)
                ids = {row.request_hash: row.pk for row in new}
                for item in items:
                    if item[1] in known:
                        ids[item[1]] = _record_known(*item)
                return [ids[key] for key in keys]
        except IntegrityError:
            logger.info("ledger round of %d writes met a concurrent insert; writing them one by one", len(items))
    return [_record_one(*item) for item in items]


def _record_one(request: CallRequest, request_hash: str, result: CallResult, attempt_log: list[dict]) -> int:
    try:
        with transaction.atomic():
            call = LLMCall.objects.create(
                request_hash=request_hash,
                attempts=result.attempts,
                first_audit_id=request.origin.get("audit_id"),
                **_values(request, result, attempt_log),
            )
            count_new_calls([call])
            return call.pk
    except IntegrityError:
        pass
    return _record_known(request, request_hash, result, attempt_log)


def _record_known(request: CallRequest, request_hash: str, result: CallResult, attempt_log: list[dict]) -> int:
    """The hash exists: an earlier failure being retried (its row takes this outcome, attempts added),
    or another worker answering the same request at the same moment (then its answer stands)."""
    with transaction.atomic():
        existing = LLMCall.objects.select_for_update().get(request_hash=request_hash)
        if existing.status == LLMCall.Status.FAILED:
            values = _values(request, result, attempt_log)
            values["attempt_log"] = [*existing.attempt_log, *attempt_log]
            # What the earlier attempts were billed stays counted.
            for name in ("prompt_tokens", "completion_tokens", "reasoning_tokens"):
                values[name] = F(name) + values[name]
            with counted_call_change([existing.pk]):
                LLMCall.objects.filter(pk=existing.pk).update(attempts=F("attempts") + result.attempts, **values)
        return existing.pk
