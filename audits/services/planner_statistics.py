"""Fresh PostgreSQL planner statistics on the audit tables once an audit has finished.

An audit writes tens of thousands of dialogues, turns, scores and calls in minutes, faster than autovacuum's
ANALYZE follows. On the statistics of the empty tables the planner takes an audit's score rows for one row and joins
them to its dialogues by a nested loop without the dialogue's key: a cell's pairs page read of a 10,000-dialogue audit
took 27.8 s, and 3 ms after ANALYZE (0.26 s for the four tables; measured, benchmarks/RESULTS.md "Paper scale
ladder"). ANALYZE reads a fixed sample of each table, so its cost does not grow with the audit.

The questions and conditions it joins are ANALYZEd too: a question bank imported since the last ANALYZE (or never
analysed, on a server without autovacuum) made the planner take a domain's 450 questions for 2, and a cell's score
read of a 2,000-dialogue audit took 132 ms instead of 7 ms beside a 40,000-dialogue one.
"""

from __future__ import annotations

from django.db import connection

from audits.models import Condition, Dialogue, LLMCall, Question, Turn, TurnScore

# The tables a finished audit's pages and analysis read by the audit, and those they join them to.
AUDIT_TABLES = (Dialogue, Turn, TurnScore, LLMCall, Question, Condition)


def planner_statistics_refresh() -> None:
    """ANALYZE the audit tables (PostgreSQL; other databases plan without such statistics)."""
    if connection.vendor != "postgresql":
        return
    tables = ", ".join(connection.ops.quote_name(model._meta.db_table) for model in AUDIT_TABLES)
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {tables}")
