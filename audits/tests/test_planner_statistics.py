"""The audit that finishes refreshes the planner's statistics on the audit tables (PostgreSQL), so the pages that
then read it by the audit plan on its real size: ANALYZE runs once, on the four tables, and PostgreSQL's own
row estimate (pg_class.reltuples, which only ANALYZE or VACUUM sets) then counts the audit's scores."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from audits.models import Audit, TurnScore
from audits.services.audit_lifecycle import audit_refresh_status
from audits.services.planner_statistics import AUDIT_TABLES
from audits.tests.engine_factories import scored_audit
from conftest import service_missing

pytestmark = pytest.mark.django_db


def test_finishing_an_audit_analyzes_the_audit_tables(django_capture_on_commit_callbacks):
    if connection.vendor != "postgresql":
        service_missing("planner statistics are PostgreSQL's (DATABASE_URL); other databases have nothing to refresh")
    audit = scored_audit("analyzed", tutors=1, questions=4, dimensions=("first_language",))
    Audit.objects.filter(pk=audit.pk).update(status=Audit.Status.RUNNING, finished_at=None)
    with CaptureQueriesContext(connection) as queries, django_capture_on_commit_callbacks(execute=True):
        assert audit_refresh_status(audit_id=audit.pk) == Audit.Status.FINISHED
    analyzed = [query["sql"] for query in queries if query["sql"].startswith("ANALYZE")]
    assert len(analyzed) == 1
    assert all(f'"{model._meta.db_table}"' in analyzed[0] for model in AUDIT_TABLES)
    with connection.cursor() as cursor:
        cursor.execute("SELECT reltuples FROM pg_class WHERE relname = %s", [TurnScore._meta.db_table])
        estimate = cursor.fetchone()[0]
    assert estimate >= TurnScore.objects.filter(audit=audit).count() > 0


def test_an_audit_that_was_already_finished_is_not_analyzed_again(django_capture_on_commit_callbacks):
    audit = scored_audit("finished before", tutors=1, questions=2, dimensions=("first_language",))
    with CaptureQueriesContext(connection) as queries, django_capture_on_commit_callbacks(execute=True):
        audit_refresh_status(audit_id=audit.pk)
    assert not [query for query in queries if query["sql"].startswith("ANALYZE")]
