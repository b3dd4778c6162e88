"""PostgreSQL plans of captured statements, read with sequential scans off: on a test's few rows the planner would
scan a table anyway, so a plan then shows only whether an index the query can use exists."""

from __future__ import annotations

import re

from django.db import connection, transaction


def plans(statements: list[str]) -> list[str]:
    """The EXPLAIN text of each statement, planned with `enable_seqscan = off`."""
    found = []
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        for sql in statements:
            cursor.execute(f"EXPLAIN {sql}")
            found.append("\n".join(row[0] for row in cursor.fetchall()))
    return found


def leading_columns(table: str) -> dict[str, str]:
    """{index name: its first column} of a table's indexes."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT i.relname, a.attname FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid "
            "JOIN pg_class t ON t.oid = x.indrelid "
            "JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = x.indkey[0] WHERE t.relname = %s",
            [table],
        )
        return dict(cursor.fetchall())


_SCAN = re.compile(r"Index (?:Only )?Scan (?:Backward )?(?:using|on) (\S+)")


def index_scans(plan: str) -> list[tuple[str, str]]:
    """(index name, its `Index Cond`, or "" when the scan walks the whole index) of each index scan in a plan."""
    lines = plan.splitlines()
    scans = []
    for n, line in enumerate(lines):
        found = _SCAN.search(line)
        if found:
            following = lines[n + 1] if n + 1 < len(lines) else ""
            condition = following.split("Index Cond:", 1)[1].strip() if "Index Cond:" in following else ""
            scans.append((found.group(1), condition))
    return scans
