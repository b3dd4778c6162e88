"""Every index of the ledger (`LLMCall`) serves a query of the code, named here, and that query's plan uses it.

`SERVED_BY` lists, per index (by its columns), the functions whose queries it serves. On every database the
ledger's indexes must be exactly those (no index without a query, none twice over); on PostgreSQL each
function is run, its statements on the ledger are captured and EXPLAINed with sequential scans disabled (a
test table of a few rows would be scanned anyway; an index the query cannot use is still not chosen), and at
least one plan of each function must name its index.
"""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from audits.llm.calls import CallRequest, CallResult, EndpointConfig
from audits.models import JudgeRun, LLMCall
from audits.selectors.endpoints import endpoint_model_mismatches
from audits.selectors.runs import call_failure_groups
from audits.services import batch_judging, ledger
from audits.services.audit_lifecycle import audit_create
from audits.tests.engine_factories import explicit_conditions, make_questions, simulation_endpoint
from audits.tests.query_plans import plans
from conftest import service_missing

pytestmark = pytest.mark.django_db

KEY = "a" * 64


def _request(f) -> CallRequest:
    config = EndpointConfig(key="e", provider="simulation", model="m", endpoint_id=f["endpoint"].pk)
    return CallRequest(endpoint=config, purpose="tutor", messages=[{"role": "user", "content": "hi"}])


def _record_many(f) -> None:
    ledger._record_many([(_request(f), KEY, CallResult(ok=True, text="again", attempts=1), [])])


def _record_known(f) -> None:
    ledger._record_known(_request(f), KEY, CallResult(ok=True, text="again", attempts=1), [])


# index columns -> {name: the query it serves, run on the fixtures}
SERVED_BY = {
    ("id",): {
        "ledger._reject (an answer marked unparsable)": lambda f: ledger._reject(f["call"].pk, "no JSON"),
        "batch_judging._ledger_reject": lambda f: batch_judging._ledger_reject([(f["call"].pk, "no JSON")]),
    },
    ("request_hash",): {
        "ledger._lookup_many (every call reads the ledger first)": lambda f: ledger._lookup_many([KEY, "b" * 64]),
        "ledger._record_many (known keys of a round's writes)": _record_many,
        "ledger._record_known (a failed row retried)": _record_known,
        "batch_judging._known_answers": lambda f: batch_judging._known_answers([KEY], f["run"]),
    },
    ("first_audit_id", "status"): {
        "selectors.runs.call_failure_groups": lambda f: call_failure_groups(audit=f["audit"]),
    },
    ("endpoint_id",): {
        "selectors.endpoints.endpoint_model_mismatches (an endpoint's page)": lambda f: endpoint_model_mismatches(
            endpoints=[f["endpoint"]]
        ),
    },
}


def _ledger_indexes() -> list[tuple[str, tuple[str, ...], str]]:
    """(name, columns, definition) of every index on the ledger's table, as the database has them."""
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                """
                SELECT i.relname, array(SELECT a.attname FROM unnest(x.indkey) WITH ORDINALITY AS k(n, o)
                                        JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = k.n
                                        ORDER BY k.o),
                       pg_get_indexdef(i.oid)
                FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
                WHERE t.relname = %s
                """,
                [LLMCall._meta.db_table],
            )
            return [(name, tuple(columns), definition) for name, columns, definition in cursor.fetchall()]
        found = connection.introspection.get_constraints(cursor, LLMCall._meta.db_table)
    return [
        (name, tuple(c["columns"]), "")
        for name, c in found.items()
        if c.get("index") or c.get("primary_key") or c.get("unique")
    ]


@pytest.fixture
def fixtures():
    endpoint = simulation_endpoint("indexed tutor")
    audit = audit_create(
        name="indexed audit",
        tutors=[endpoint],
        student_endpoint=simulation_endpoint("indexed student"),
        judge_endpoint=simulation_endpoint("indexed judge"),
        questions=make_questions(1, prefix="indexes"),
        conditions=explicit_conditions(),
    )
    call = LLMCall.objects.create(
        request_hash=KEY,
        endpoint=endpoint,
        purpose="tutor",
        model="m",
        request={},
        response_text="ok",
        status=LLMCall.Status.FAILED,
        first_audit=audit,
    )
    run = JudgeRun.objects.create(owner="indexes", task_name="t")
    return {"endpoint": endpoint, "audit": audit, "call": call, "run": run}


def test_every_ledger_index_serves_a_listed_query_and_none_is_there_twice():
    indexes = _ledger_indexes()
    columns = [cols for _, cols, _ in indexes]
    assert sorted(set(columns)) == sorted(SERVED_BY), indexes
    assert len(columns) == len(set(columns)), f"an index twice over: {indexes}"


def _ledger_of_some_size(f, rows: int = 2_000) -> None:
    """Plan on a ledger of `rows` calls, ANALYZEd: whatever statistics an earlier test left (an ANALYZE of the empty
    table makes a primary-key scan look cheapest for any query), the planner then weighs the table as a ledger."""
    LLMCall.objects.bulk_create(
        LLMCall(request_hash=f"{i:064x}", endpoint=f["endpoint"], purpose="tutor", model="m", request={}, status="ok")
        for i in range(1, rows + 1)
    )
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {connection.ops.quote_name(LLMCall._meta.db_table)}")


@pytest.mark.parametrize(
    "cols,query", [(cols, query) for cols, queries in SERVED_BY.items() for query in queries], ids=lambda v: str(v)
)
def test_each_listed_query_is_planned_on_its_index(fixtures, cols, query):
    if connection.vendor != "postgresql":
        service_missing("plans are read on PostgreSQL (DATABASE_URL); the index list is checked on every database")
    name = next(name for name, columns, _ in _ledger_indexes() if columns == cols)
    table = LLMCall._meta.db_table
    _ledger_of_some_size(fixtures)
    with CaptureQueriesContext(connection) as captured:
        SERVED_BY[cols][query](fixtures)
    statements = [
        q["sql"]
        for q in captured.captured_queries
        if table in q["sql"] and q["sql"].lstrip().upper().startswith(("SELECT", "UPDATE", "DELETE"))
    ]
    assert statements, f"{query} sent no query on the ledger"
    found = plans(statements)
    assert any(name in plan for plan in found), f"{query} does not use {name}:\n" + "\n---\n".join(found)
