"""An audit with failed dialogues and unparsable judgements states what each cell
lost — on the results page, in the CSV and JSON exports and in the HTML report's exclusions section —
and the counts equal an independent count of the rows."""

import json

import pytest
from django.urls import reverse

from audits.exports import read_csv
from audits.models import Audit, Dialogue, TurnScore
from audits.services.audit_lifecycle import audit_create
from audits.services.dialogue_batches import audit_run_inline
from audits.tests.engine_factories import explicit_conditions, make_questions, simulation_endpoint

pytestmark = pytest.mark.django_db

METRIC = "corrective_tone"


@pytest.fixture
def damaged_audit():
    audit = audit_create(
        name="damaged",
        tutors=[simulation_endpoint("tutor")],
        student_endpoint=simulation_endpoint("student"),
        judge_endpoint=simulation_endpoint("judge"),
        questions=make_questions(18, prefix="dmg"),
        conditions=explicit_conditions(("first_language",), control=False),
    )
    assert audit_run_inline(audit=audit) == Audit.Status.FINISHED
    dialogues = list(Dialogue.objects.filter(audit=audit).order_by("pk"))
    failed = dialogues[:3]
    Dialogue.objects.filter(pk__in=[d.pk for d in failed]).update(
        status=Dialogue.Status.FAILED, error="connection error: ConnectError"
    )
    damaged = TurnScore.objects.filter(turn__dialogue__in=dialogues[5:9], metric=METRIC).order_by("pk")[:4]
    TurnScore.objects.filter(pk__in=[s.pk for s in damaged]).update(status=TurnScore.Status.UNPARSABLE, value=None)
    return audit


def expected_counts(audit):
    unparsable = TurnScore.objects.filter(
        turn__dialogue__audit=audit,
        turn__dialogue__status=Dialogue.Status.DONE,
        metric=METRIC,
        status=TurnScore.Status.UNPARSABLE,
    ).count()
    not_applicable = TurnScore.objects.filter(
        turn__dialogue__audit=audit, turn__dialogue__status=Dialogue.Status.DONE, metric=METRIC, value=-1
    ).count()
    return {
        "dialogues_planned": 36,
        "dialogues_done": 33,
        "dialogues_failed": 3,
        "turns_unparsable": unparsable,
        "turns_not_applicable": not_applicable,
    }


def test_counts_behind_each_cell_on_the_page_and_in_every_export(damaged_audit, researcher_client, analysis_inline):
    expected = expected_counts(damaged_audit)
    assert expected["turns_unparsable"] == 4

    rows = read_csv(
        researcher_client.get(
            reverse("audits:results-export", args=[damaged_audit.pk]), {"format": "csv", "table": "contrasts"}
        ).content.decode()
    )
    (row,) = [r for r in rows if r["metric"] == METRIC]
    for name, value in expected.items():
        assert int(row[name]) == value, name
    assert int(row["pairs_used"]) == int(row["n"])

    payload = json.loads(
        researcher_client.get(reverse("audits:results-export", args=[damaged_audit.pk]), {"format": "json"}).content
    )
    (cell,) = [r for r in payload["tables"]["contrasts"] if r["metric"] == METRIC]
    assert {name: cell[name] for name in expected} == expected
    assert payload["methods"]["exclusions"]["dialogues_failed"] == 3
    assert payload["methods"]["exclusions"]["turn_scores_unparsable"] == 4
    assert payload["methods"]["rule"] == "calibrated" and "calibrated" in payload["methods"]["violation_rule"]

    page = researcher_client.get(reverse("audits:results", args=[damaged_audit.pk])).content.decode()
    assert "3 failed" in page and "4 unparsable" in page
    assert "33/36 dialogues" in page

    report = researcher_client.get(
        reverse("audits:results-export", args=[damaged_audit.pk]), {"format": "html"}
    ).content.decode()
    assert 'id="exclusions"' in report
    assert "3 of 36 planned dialogues failed" in report
    assert "4 judged tutor-turn scores were unparsable" in report
