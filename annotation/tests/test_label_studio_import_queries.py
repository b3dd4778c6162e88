"""The Label Studio import writes a batch of tasks with a few queries, not one or more per task or per label: a 10 MB
exporter-like export of 4,600 tasks (18,400 labels) took 51 s and 78,239 queries on SQLite when every item, assignment,
label and time was written and looked up on its own, and docker-compose's gunicorn ends a request at 120 s."""

import json
from datetime import datetime, timedelta

import pytest
from django.db import connection

from annotation.label_studio.importing import MATCH_BATCH, label_studio_import
from annotation.models import Adjudication, GoldLabel, Item, Label
from annotation.services.projects import project_create, question_create, stage_create

from .main_setup import YES_NO

pytestmark = pytest.mark.django_db

TASKS = 1_200  # three batches of MATCH_BATCH, the last one partial
BATCHES = -(-TASKS // MATCH_BATCH)
# Per batch: its items, their assignments, labels, gold and finals read; items, assignments, labels (a few queries
# each: SQLite takes a bounded number of values a query), their times, gold and finals written. 1,200 tasks take 132.
QUERIES_PER_BATCH = 60
START = datetime.fromisoformat("2026-01-01T10:00:00+00:00")


def _region(name: str, value: str, kind: str = "choices") -> dict:
    key = "choices" if kind == "choices" else "text"
    return {"from_name": name, "to_name": "item", "type": kind, "value": {key: [value]}}


def _export(count: int) -> list[dict]:
    """Tasks as the exporter writes them: two annotators' labels with their stored time, some gold and finals."""
    tasks = []
    for n in range(count):
        annotations = [
            {
                "completed_by": {"email": f"annotator-{a}@edufair.invalid"},
                "lead_time": 30,
                "result": [
                    _region(
                        "provenance",
                        f"kind=label; stage=1; labelled_at={(START + timedelta(seconds=2 * n + a)).isoformat()}",
                        "textarea",
                    ),
                    _region("q1", "yes" if (n + a) % 3 else "no"),
                    _region("q2", "no"),
                ],
            }
            for a in range(2)
        ]
        if n % 50 == 0:
            annotations.append({"result": [_region("provenance", "kind=gold", "textarea"), _region("q1", "yes")]})
        if n % 75 == 0:
            annotations.append(
                {
                    "result": [
                        _region("provenance", "kind=adjudication; stage=1; method=majority", "textarea"),
                        _region("q2", "no"),
                    ]
                }
            )
        tasks.append({"id": n, "data": {"text": f"Item {n}", "external_id": f"item-{n}"}, "annotations": annotations})
    return tasks


def _counted_import(project, content: str):
    """The report and the import's query count (counted at the cursor; CaptureQueriesContext keeps 9,000)."""
    queries = 0

    def count(execute, sql, params, many, context):
        nonlocal queries
        queries += 1
        return execute(sql, params, many, context)

    with connection.execute_wrapper(count):
        report = label_studio_import(project=project, content=content)
    return report, queries


def test_an_import_and_its_repeat_take_a_few_queries_per_batch_of_tasks_not_per_task():
    project = project_create(name="Batched")
    q1 = question_create(project=project, key="q1", prompt="Q1?", choices=YES_NO)
    q2 = question_create(project=project, key="q2", prompt="Q2?", choices=YES_NO)
    stage_create(project=project, name="Stage 1", questions=[q1, q2], overlap=2)
    content = json.dumps(_export(TASKS))

    report, queries = _counted_import(project, content)
    # Writing and looking up each row on its own took 20,592 queries for these tasks (17 a task).
    assert queries < QUERIES_PER_BATCH * BATCHES
    assert (report.items_created, report.labels_created, report.annotators_created) == (TASKS, 4 * TASKS, 2)
    assert (report.gold_labels, report.adjudications) == (TASKS // 50, TASKS // 75)
    assert Label.objects.filter(assignment__item__project=project).count() == 4 * TASKS
    stored_at = Label.objects.filter(assignment__item__project=project, question=q1).values_list(
        "created_at", flat=True
    )
    assert sorted(stored_at) == [START + timedelta(seconds=s) for s in range(2 * TASKS)]  # the provenance's times

    again, queries = _counted_import(project, content)
    assert queries < QUERIES_PER_BATCH * BATCHES
    assert (again.items_created, again.items_matched, again.labels_created) == (0, TASKS, 0)
    assert (again.labels_unchanged, again.gold_labels, again.adjudications) == (4 * TASKS, 0, 0)
    assert Item.objects.filter(project=project).count() == TASKS
    assert GoldLabel.objects.filter(item__project=project).count() == TASKS // 50
    assert Adjudication.objects.filter(item__project=project).count() == TASKS // 75
