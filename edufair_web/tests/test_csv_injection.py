"""CSV injection (OWASP "CSV Injection"): no CSV the app offers lets a spreadsheet run a cell as a formula.

Every CSV export is fetched the way a user gets it, with hostile text planted in every free-text field
that reaches it:

- audits: every results table (`/audits/results/<id>/export/?format=csv&table=…` and the API's
  `/api/audits/<id>/export/`), with formula text in the audit's name, the tutors' names and the
  questions' domain — including a newline, which must not start a new line of the file;
- annotation: the labels export (page `labels.csv` and API `?as=csv`) with formula text in the project,
  stage, item, subject, category and justification; the pass-rate table (`pass-rates.csv`) with a
  formula as the stage's name.

The rule checked on every cell of every row (header included): a cell starting with = + - @ (or tab /
carriage return) is a number, or it is neutralised with a leading quote.
"""

from __future__ import annotations

import csv
import io

import pytest
from django.urls import reverse

from audits.exports import TABLES

pytestmark = [pytest.mark.django_db, pytest.mark.slow, pytest.mark.usefixtures("analysis_inline")]

PAYLOADS = ['=HYPERLINK("http://evil.example","x")', "+1+cmd|' /C calc'!A0", "-2+3", "@SUM(A1:A9)"]
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def dangerous_cells(body: str) -> list[str]:
    return [
        cell
        for row in csv.reader(io.StringIO(body))
        for cell in row
        if cell.startswith(FORMULA_STARTS) and not is_number(cell)
    ]


def assert_safe(body: str, where: str, planted: int) -> None:
    assert body.count("'") >= planted, f"{where}: the planted payloads did not reach the export"
    assert dangerous_cells(body) == [], f"{where}: formula cells not neutralised"


@pytest.fixture
def hostile_audit():
    from audits.conditions import ConditionChoice, build_conditions, default_levels, default_names
    from audits.services.audit_lifecycle import audit_create
    from audits.services.dialogue_batches import audit_run_inline
    from audits.tests.engine_factories import PLANTED_BIAS, make_questions, simulation_endpoint

    tutors = [simulation_endpoint(PAYLOADS[0]), simulation_endpoint(PAYLOADS[3], bias=PLANTED_BIAS)]
    other = simulation_endpoint("student and judge")
    conditions = build_conditions(
        ConditionChoice(control=True, explicit_dimensions=("first_language",)), default_levels(), default_names()
    )
    audit = audit_create(
        name="quarterly\n" + PAYLOADS[1],
        tutors=tutors,
        student_endpoint=other,
        judge_endpoint=other,
        questions=make_questions(3, domain=PAYLOADS[2]),
        conditions=conditions,
        seed=1,
    )
    assert audit_run_inline(audit=audit) == "finished"
    return audit


def test_every_audit_results_table_is_neutralised(hostile_audit, researcher_client):
    tables_with_rows = 0
    for table in TABLES:
        page = researcher_client.get(
            reverse("audits:results-export", args=[hostile_audit.pk]), {"format": "csv", "table": table}
        )
        assert page.status_code == 200, (table, page.content[:300])
        assert page["Content-Type"].startswith("text/csv")
        body = page.content.decode()
        # Every row names a tutor (and most a domain): a table with rows carries the planted text.
        planted = 1 if body.count("\n") > 1 else 0
        tables_with_rows += planted
        assert_safe(body, f"page export {table}", planted=planted)
        api = researcher_client.get(f"/api/audits/{hostile_audit.pk}/export/", {"format": "csv", "table": table})
        assert api.status_code == 200, (table, api.content[:300])
        assert_safe(api.content.decode(), f"API export {table}", planted=planted)
    assert tables_with_rows >= 6


@pytest.fixture
def hostile_project(make_user):
    from annotation.services.labelling import label_next, main_label_submit
    from annotation.tests.main_setup import build_main_stage, pass_gate
    from annotation.workflow.answers import Answer

    s = build_main_stage(items=2, overlap=2, subjects=(PAYLOADS[2], PAYLOADS[3]), name=PAYLOADS[0])
    s.stage.name = PAYLOADS[1]
    s.stage.save(update_fields=["name"])
    for item in s.items:
        item.external_id = PAYLOADS[3] + str(item.pk)
        item.category = PAYLOADS[0]
        item.save(update_fields=["external_id", "category"])
    for n in range(2):
        user = make_user("annotator", username=f"{PAYLOADS[0]}{n}")
        pass_gate(s.stage, user)
        for _ in s.items:
            item = label_next(annotator=user, stage=s.stage).item
            main_label_submit(
                annotator=user,
                stage=s.stage,
                item=item,
                answers={"q1": Answer(value="no", justification=PAYLOADS[n % len(PAYLOADS)])},
                seconds=12,
            )
    return s.project


def test_label_exports_are_neutralised(hostile_project, researcher_client):
    page = researcher_client.get(reverse("annotation:labels-export", args=[hostile_project.pk, "csv"]))
    assert page.status_code == 200
    assert_safe(page.content.decode(), "labels.csv", planted=4)
    api = researcher_client.get(reverse("annotation-labels-export", args=[hostile_project.pk]), {"as": "csv"})
    assert api.status_code == 200
    assert_safe(api.content.decode(), "API labels ?as=csv", planted=4)


def test_pass_rate_table_is_neutralised(hostile_project, researcher_client):
    response = researcher_client.get(reverse("annotation:project-pass-rates", args=[hostile_project.pk, "csv"]))
    assert response.status_code == 200
    assert_safe(response.content.decode(), "pass-rates.csv", planted=1)


def test_the_rule_catches_an_unneutralised_cell():
    """The checker itself: a raw formula is caught; a quoted one and a negative number are not."""
    assert dangerous_cells("a,=1+1\n") == ["=1+1"]
    assert dangerous_cells("a,'=1+1,-0.25\n") == []
