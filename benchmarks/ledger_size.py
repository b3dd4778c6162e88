"""Benchmark of database bytes per dialogue, the ledger (`audits_llmcall`) apart, on PostgreSQL.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/ANY .venv/bin/python benchmarks/ledger_size.py [--questions 15]

Creates a fresh database beside the one DATABASE_URL names (`<name>_ledger_size`, dropped first), migrates it,
creates a simulation audit (2 tutors × 10 conditions × `--questions` questions, the demo's shape) and runs it
in this process (`audit_run_inline`: the engine, the ledger and the writes of a worker), then reports
pg_total_relation_size (heap, TOAST and indexes, dead rows included, as an operator sees it) of every table
that grew, per dialogue, and the size of each index of `audits_llmcall`. Nothing here is a test; the numbers
go to benchmarks/RESULTS.md by hand, with this command.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SIZES = """
SELECT c.relname, pg_total_relation_size(c.oid)
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind = 'r' AND n.nspname = 'public'
"""
LEDGER_INDEXES = """
SELECT i.relname, pg_relation_size(i.oid), pg_get_indexdef(i.oid)
FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
WHERE t.relname = 'audits_llmcall' ORDER BY i.relname
"""


def fresh_database(url: str) -> str:
    """Drop and create `<name>_ledger_size` on the server of `url`; returns its URL."""
    import psycopg

    parts = urlsplit(url)
    name = f"{parts.path.lstrip('/') or 'edufair'}_ledger_size"
    admin = urlunsplit(parts._replace(path="/postgres"))
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')
    return urlunsplit(parts._replace(path=f"/{name}"))


def sizes(cursor) -> dict[str, int]:
    cursor.execute(SIZES)
    return dict(cursor.fetchall())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=15, help="questions (dialogues = 20 × questions)")
    args = parser.parse_args()
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith("postgres"):
        sys.exit("DATABASE_URL must point at PostgreSQL (pg_total_relation_size)")
    os.environ["DATABASE_URL"] = fresh_database(url)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "edufair_web.settings")
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    call_command("migrate", verbosity=0)
    from audits.models import Dialogue, LLMCall
    from audits.services.audit_lifecycle import audit_create
    from audits.services.dialogue_batches import audit_run_inline
    from audits.tests.engine_factories import PLANTED_BIAS, explicit_conditions, make_questions, simulation_endpoint

    audit = audit_create(
        name="ledger size",
        tutors=[simulation_endpoint("fair tutor"), simulation_endpoint("biased tutor", bias=PLANTED_BIAS)],
        student_endpoint=simulation_endpoint("student"),
        judge_endpoint=simulation_endpoint("judge"),
        questions=make_questions(args.questions, prefix="size"),
        conditions=explicit_conditions(("gender", "immigration", "first_language", "ses")),
        batch_size=50,
    )
    with connection.cursor() as cursor:
        before = sizes(cursor)
    started = time.perf_counter()
    status = audit_run_inline(audit=audit)
    elapsed = time.perf_counter() - started
    with connection.cursor() as cursor:
        after = sizes(cursor)
        cursor.execute(LEDGER_INDEXES)
        indexes = cursor.fetchall()
    dialogues = Dialogue.objects.filter(audit=audit, status=Dialogue.Status.DONE).count()
    calls = LLMCall.objects.count()
    grown = {name: after[name] - before.get(name, 0) for name in after if after[name] != before.get(name, 0)}
    total = sum(grown.values())
    print(f"audit {status}: {dialogues} dialogues done, {calls} ledger rows, {elapsed:.1f} s")
    print(f"database grew {total / 1024:.1f} KiB: {total / dialogues / 1024:.2f} KiB per dialogue")
    for name, size in sorted(grown.items(), key=lambda item: -item[1]):
        print(f"  {name:32s} {size / dialogues / 1024:7.2f} KiB/dialogue  {100 * size / total:5.1f} %")
    print(f"ledger: {after['audits_llmcall'] / calls:.0f} bytes per row; {len(indexes)} indexes:")
    for name, size, definition in indexes:
        print(f"  {size / 1024:8.0f} KiB  {name}: {definition.split(' USING ')[-1]}")
    connection.close()


if __name__ == "__main__":
    main()
