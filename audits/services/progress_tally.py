"""Keeping an audit's call totals (`audits.models.progress.AuditCallTally`) as its ledger rows are written.

Every write that adds or changes a ledger row calls one function here in its transaction, so each total always
equals a recount from the rows (`call_totals_recount`). (The judged turns' totals are kept by the database itself:
see `audits.models.progress`.)"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from django.db import IntegrityError, connection, transaction

from audits.models import AuditCallTally, LLMCall

CALL_FIELDS = (
    "calls",
    "ok",
    "unparsable",
    "attempts",
    "prompt_tokens",
    "completion_tokens",
    "reasoning_tokens",
    "billed_prompt",
    "billed_completion",
)
_READ = ("first_audit_id", "endpoint_id", "status", "attempts", "prompt_tokens", "completion_tokens")
_READ_ALL = (*_READ, "reasoning_tokens", "price_factor")


def call_contribution(row) -> tuple[tuple[int, int], dict[str, float]] | None:
    """((audit, endpoint ref), what one ledger row adds to its audit's totals), or None for a row no audit paid."""
    get = row.get if isinstance(row, dict) else lambda name: getattr(row, name)
    if not get("first_audit_id"):
        return None
    factor = get("price_factor")
    return (get("first_audit_id"), get("endpoint_id") or 0), {
        "calls": 1,
        "ok": int(get("status") == LLMCall.Status.OK),
        "unparsable": int(get("status") == LLMCall.Status.UNPARSABLE),
        "attempts": get("attempts"),
        "prompt_tokens": get("prompt_tokens"),
        "completion_tokens": get("completion_tokens"),
        "reasoning_tokens": get("reasoning_tokens"),
        "billed_prompt": get("prompt_tokens") * factor,
        "billed_completion": get("completion_tokens") * factor,
    }


def call_totals_recount(rows: Iterable) -> dict[tuple[int, int], dict[str, float]]:
    """The totals the rows add up to, by (audit, endpoint ref)."""
    totals: dict[tuple[int, int], dict[str, float]] = defaultdict(lambda: dict.fromkeys(CALL_FIELDS, 0))
    for row in rows:
        found = call_contribution(row)
        if found is not None:
            key, part = found
            for name, value in part.items():
                totals[key][name] += value
    return dict(totals)


def count_new_calls(rows: Iterable[LLMCall]) -> None:
    """Ledger rows just inserted: their audits' totals grow by them (in the caller's transaction)."""
    _apply(call_totals_recount(rows), sign=1)


@contextmanager
def counted_call_change(call_ids: Iterable[int]) -> Iterator[None]:
    """Around a change to existing ledger rows: the rows are locked, and their audits' totals move by what the
    change made of them (status, attempts, tokens, price, endpoint)."""
    ids = list(call_ids)
    with transaction.atomic():
        before = call_totals_recount(LLMCall.objects.select_for_update().filter(pk__in=ids).values(*_READ_ALL))
        yield
        after = call_totals_recount(LLMCall.objects.filter(pk__in=ids).values(*_READ_ALL))
        _apply(before, sign=-1)
        _apply(after, sign=1)


def _apply(totals: dict[tuple[int, int], dict[str, float]], *, sign: int) -> None:
    for (audit_id, endpoint_ref), part in sorted(totals.items()):  # one order everywhere: no deadlock
        _bump(AuditCallTally, {"audit_id": audit_id, "endpoint_ref": endpoint_ref}, part, sign)


def _bump(model, keys: dict, part: dict, sign: int) -> None:
    changes = {name: sign * value for name, value in part.items() if value}
    if not changes or _add_to_row(model, keys, changes):
        return
    try:
        with transaction.atomic():
            model.objects.create(**keys, **{name: sign * value for name, value in part.items()})
    except IntegrityError:  # another writer created the row meanwhile
        _add_to_row(model, keys, changes)


def _add_to_row(model, keys: dict, changes: dict) -> bool:
    """`UPDATE … SET f = f + %s … WHERE keys` as one plain statement: it runs with every ledger round, on the
    engine's database thread, where compiling the same F() update each time cost a fifth of the thread."""
    meta, quote = model._meta, connection.ops.quote_name
    columns = [quote(meta.get_field(name).column) for name in changes]
    sets = ", ".join(f"{column} = {column} + %s" for column in columns)
    where = " AND ".join(f"{quote(meta.get_field(name).column)} = %s" for name in keys)
    sql = f"UPDATE {quote(meta.db_table)} SET {sets} WHERE {where}"  # noqa: S608 — names from the model; values are parameters
    with connection.cursor() as cursor:
        cursor.execute(sql, [*changes.values(), *keys.values()])
        return cursor.rowcount > 0
