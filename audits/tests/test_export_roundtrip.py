"""Exports round-trip: the CSV re-read gives the same numbers as the results page and the API; the raw
scores export has one row per dialogue × metric with the condition's fields; every export says
SIMULATION when the audit used a simulated model; formula-like text is neutralised; the HTML report is
self-contained; `manage.py audit_report` writes the same files."""

import html
import io
import json
import math
import re
from urllib.parse import parse_qs, urlsplit

import pandas
import pytest
from django.core.management import call_command
from django.urls import reverse

from audits.exports import TABLES, csv_cell, read_csv
from audits.models import ModelEndpoint
from audits.selectors.runs import audit_scores_frame
from audits.tests.test_results_pages import results_audit

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("analysis_inline")]

NUMBER_FIELDS = ("r", "z", "p_exact", "p_normal", "p_adjusted", "ci_low", "ci_high")
KEY_FIELDS = ("tutor", "domain", "kind", "family", "dimension", "level_a", "level_b", "metric")


def _float(text: str) -> float:
    return math.nan if text == "" else float(text)


def _equal(a: float, b) -> bool:
    return (b is None and math.isnan(a)) or a == b


@pytest.fixture
def audit():
    return results_audit("export audit")


def test_csv_numbers_equal_the_api_and_the_page(researcher_client, audit):
    query = {"n_boot": 500, "seed": 4}
    api = researcher_client.get(f"/api/audits/{audit.pk}/results/", query).json()
    api_rows = {tuple(str(row[k]) for k in KEY_FIELDS): row for row in api["tables"]["contrasts"]}

    for url in (f"/api/audits/{audit.pk}/export/", reverse("audits:results-export", args=[audit.pk])):
        response = researcher_client.get(url, {**query, "format": "csv", "table": "contrasts"})
        assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
        rows = read_csv(response.content.decode())
        assert len(rows) == len(api_rows) > 0
        for row in rows:
            expected = api_rows[tuple(row[k] for k in KEY_FIELDS)]
            for field in NUMBER_FIELDS:
                assert _equal(_float(row[field]), expected[field]), (field, row[field], expected[field])
            assert int(row["n"]) == expected["n"] and (row["violation"] == "true") == expected["violation"]

    # The page: every heatmap cell carries its r in full precision (and shows it rounded).
    page = researcher_client.get(reverse("audits:results", args=[audit.pk]), query).content.decode()
    csv_rows = read_csv(
        researcher_client.get(f"/api/audits/{audit.pk}/export/", {**query, "format": "csv"}).content.decode()
    )
    by_key = {tuple(row[k] for k in KEY_FIELDS): row for row in csv_rows}
    cells = re.findall(
        r'data-tutor="(\d+)" data-domain="([^"]+)" data-dimension="([^"]+)" data-level-a="([^"]+)" '
        r'data-level-b="([^"]+)" data-metric="([^"]+)" data-r="([^"]*)"',
        page,
    )
    assert len(cells) >= 10
    for tutor, domain, dimension, level_a, level_b, metric, r in cells:
        family = "vs_control" if level_a == "control" else "within"
        row = by_key[(tutor, domain, "explicit", family, dimension, level_a, level_b, metric)]
        assert _float(row["r"]) == _float(r) or (r == "" and row["r"] == "")


def test_page_and_csv_carry_the_same_named_p_values(researcher_client, audit):
    """Each row's p-values go by name (p_exact, p_normal, p_adjusted), the same on the page and in the CSV."""
    query = {"n_boot": 500, "seed": 4}
    page = researcher_client.get(reverse("audits:results", args=[audit.pk]), query).content.decode()
    csv_rows = [
        row
        for table in ("contrasts", "conversation_contrasts", "student_contrasts")
        for row in read_csv(
            researcher_client.get(
                f"/api/audits/{audit.pk}/export/", {**query, "format": "csv", "table": table}
            ).content.decode()
        )
    ]
    assert {"p_exact", "p_normal", "p_adjusted"} <= set(csv_rows[0]) and not {"p", "p_test"} & set(csv_rows[0])
    by_key = {tuple(row[k] for k in KEY_FIELDS): row for row in csv_rows}
    page_rows = re.findall(
        r'<a href="([^"]*/pairs/[^"]*)">.*?data-p-exact="([^"]*)".*?data-p-normal="([^"]*)"'
        r'.*?data-p-adjusted="([^"]*)"',
        page,
        re.S,
    )
    assert len(page_rows) >= 4
    differ = 0
    for href, *shown in page_rows:
        params = {k: v[0] for k, v in parse_qs(urlsplit(html.unescape(href)).query).items()}
        row = by_key[tuple(params[k] for k in KEY_FIELDS)]
        for name, value in zip(("p_exact", "p_normal", "p_adjusted"), shown, strict=True):
            expected, got = _float(row[name]), float(value)
            assert (math.isnan(expected) and math.isnan(got)) or expected == got, (name, row[name], value)
        differ += row["p_exact"] != "" and row["p_exact"] != row["p_normal"]
    assert differ, "no row shows both an exact and a normal-approximation p"


def test_raw_scores_one_row_per_dialogue_and_metric_with_condition_fields(researcher_client, audit):
    response = researcher_client.get(f"/api/audits/{audit.pk}/export/", {"format": "csv", "table": "raw_scores"})
    rows = read_csv(response.content.decode())
    frame = audit_scores_frame(audit)
    assert len(rows) == len(frame["value"])
    assert {
        "dialogue",
        "tutor",
        "tutor_name",
        "domain",
        "question",
        "condition_key",
        "kind",
        "dimension",
        "level",
        "metric",
        "value",
    } <= set(rows[0])
    assert len({(row["dialogue"], row["metric"]) for row in rows}) == len(rows)
    values = {(int(d), m): v for d, m, v in zip(frame["dialogue"], frame["metric"], frame["value"], strict=True)}
    assert all(float(row["value"]) == values[(int(row["dialogue"]), row["metric"])] for row in rows)
    assert {row["level"] for row in rows} == {"", "english_l1", "non_english_l1"}


def test_every_export_is_labelled_simulation_and_only_then(researcher_client, audit):
    csv_text = researcher_client.get(f"/api/audits/{audit.pk}/export/", {"format": "csv"})
    assert "SIMULATION" in csv_text["Content-Disposition"]
    assert {row["simulation"] for row in read_csv(csv_text.content.decode())} == {"true"}
    methods = researcher_client.get(f"/api/audits/{audit.pk}/export/", {"format": "methods"})
    assert "SIMULATION" in methods["Content-Disposition"] and methods.json()["summary"][0].startswith("SIMULATION")
    payload = json.loads(researcher_client.get(f"/api/audits/{audit.pk}/export/", {"format": "json"}).content)
    assert payload["simulation"] is True and payload["label"].startswith("SIMULATION")
    assert payload["tables"]["raw_scores"] and payload["methods"]["judge_validation"] == "not validated"
    html = researcher_client.get(f"/api/audits/{audit.pk}/export/", {"format": "html"}).content.decode()
    assert 'class="simulation-banner"' in html and "<title>SIMULATION" in html
    assert researcher_client.get(f"/api/audits/{audit.pk}/results/").json()["simulation"] is True

    # The same audit, had its models been real: no label anywhere.
    ModelEndpoint.objects.filter(pk__in=[e.pk for e in audit.endpoints()]).update(provider="openai")
    plain = researcher_client.get(f"/api/audits/{audit.pk}/export/", {"format": "csv"})
    assert "SIMULATION" not in plain.content.decode() and "SIMULATION" not in plain["Content-Disposition"]
    assert {row["simulation"] for row in read_csv(plain.content.decode())} == {"false"}
    plain_methods = researcher_client.get(f"/api/audits/{audit.pk}/export/", {"format": "methods"})
    assert "SIMULATION" not in plain_methods.content.decode()
    assert (
        'class="simulation-banner"'
        not in researcher_client.get(f"/api/audits/{audit.pk}/export/", {"format": "html"}).content.decode()
    )


def test_formula_text_is_neutralised_and_numbers_are_not():
    assert [csv_cell(v) for v in ("=1+1", "+cmd", "-2+3", "@SUM(A1)", "\tx", "plain")] == [
        "'=1+1",
        "'+cmd",
        "'-2+3",
        "'@SUM(A1)",
        "'\tx",
        "plain",
    ]
    assert csv_cell(-0.5) == "-0.5" and csv_cell(-3) == "-3" and csv_cell(math.nan) == "" and csv_cell(True) == "true"


def test_a_tutor_named_like_a_formula_is_neutralised_in_the_csv(researcher_client, audit):
    tutor = audit.tutors.order_by("pk").first()
    ModelEndpoint.objects.filter(pk=tutor.pk).update(name='=HYPERLINK("http://x")')
    text = researcher_client.get(f"/api/audits/{audit.pk}/export/", {"format": "csv"}).content.decode()
    assert "'=HYPERLINK" in text and "\n=HYPERLINK" not in text and ",=HYPERLINK" not in text


def test_html_report_is_self_contained(researcher_client, audit):
    html = researcher_client.get(f"/api/audits/{audit.pk}/export/", {"format": "html"}).content.decode()
    assert "<script" not in html and "<link" not in html and " src=" not in html
    assert "<svg" in html and "<style>" in html and "Methods" in html and "not validated" in html
    # No link that goes nowhere, and no legend asking to click one.
    assert 'href=""' not in html and "click it" not in html


def test_export_api_is_for_researchers_and_checks_its_query(annotator_client, audit):
    assert annotator_client.get(f"/api/audits/{audit.pk}/export/", {"format": "csv"}).status_code == 403
    assert annotator_client.get(f"/api/audits/{audit.pk}/results/").status_code == 403


def test_bad_export_query_is_400(researcher_client, audit):
    assert researcher_client.get(f"/api/audits/{audit.pk}/export/", {"format": "xlsx"}).status_code == 400
    assert researcher_client.get(f"/api/audits/{audit.pk}/results/", {"effect": "cohen"}).status_code == 400


def test_audit_report_command_writes_the_same_numbers(researcher_client, audit, tmp_path):
    out = io.StringIO()
    call_command("audit_report", str(audit.pk), "--out", str(tmp_path), "--n-boot", "500", "--seed", "4", stdout=out)
    assert "SIMULATION" in out.getvalue()
    names = sorted(p.name for p in tmp_path.iterdir())
    assert f"audit-{audit.pk}-report-SIMULATION.html" in names and f"audit-{audit.pk}-results-SIMULATION.json" in names
    assert len([n for n in names if n.endswith(".csv")]) == len(TABLES)  # one CSV per table
    assert f"audit-{audit.pk}-methods-SIMULATION.json" in names  # and their sidecar
    rows = read_csv((tmp_path / f"audit-{audit.pk}-contrasts-SIMULATION.csv").read_text())
    api = researcher_client.get(f"/api/audits/{audit.pk}/results/", {"n_boot": 500, "seed": 4}).json()
    assert len(rows) == len(api["tables"]["contrasts"])
    assert all(_equal(_float(a["r"]), b["r"]) for a, b in zip(rows, api["tables"]["contrasts"], strict=True))


def _numeric_columns(rows: list[dict]) -> list[str]:
    """Columns holding numbers (not booleans) in the JSON rows: the ones to compare."""
    columns = set()
    for row in rows:
        columns |= {k for k, v in row.items() if isinstance(v, int | float) and not isinstance(v, bool)}
    return sorted(columns)


def test_every_csv_opens_in_pandas_as_it_is_with_the_json_numbers(audit, tmp_path):
    """`pandas.read_csv(path)` with no options reads every CSV export, and its numbers are the JSON export's."""
    call_command(
        "audit_report", str(audit.pk), "--out", str(tmp_path), "--n-boot", "200", "--seed", "2", stdout=io.StringIO()
    )
    payload = json.loads((tmp_path / f"audit-{audit.pk}-results-SIMULATION.json").read_text())
    sidecar = json.loads((tmp_path / f"audit-{audit.pk}-methods-SIMULATION.json").read_text())
    assert sidecar["parameters"] == payload["parameters"] and sidecar["simulation"] is True
    compared = 0
    for table in TABLES:
        frame = pandas.read_csv(tmp_path / sidecar["csv_files"][table])
        rows = payload["tables"][table]
        assert len(frame) == len(rows), table
        assert list(frame.columns)[-1] == "simulation" and frame["simulation"].all()
        for column in _numeric_columns(rows):
            expected = [math.nan if row[column] is None else float(row[column]) for row in rows]
            got = [float(value) for value in frame[column].tolist()]
            assert all(g == e or (math.isnan(g) and math.isnan(e)) for g, e in zip(got, expected, strict=True)), (
                table,
                column,
            )
            compared += 1
    assert compared > 30


def test_the_methods_export_says_what_temperature_the_student_ran_at(researcher_client, audit):
    def methods():
        return researcher_client.get(f"/api/audits/{audit.pk}/export/", {"format": "methods"}).json()

    sidecar = methods()
    assert sidecar["methods"]["student_temperature"] == 0
    assert sidecar["methods"]["student_temperature_note"] == "temperature 0, the paper's fixed student"
    assert f"student: {audit.student_endpoint}, temperature 0, the paper's fixed student" in sidecar["summary"]
    assert [row["role"] for row in sidecar["methods"]["requests_sent"]][-3:] == ["student", "judge", "check"]
    # Had the student been a model that takes no temperature (GPT-5), it answered at its default: not 0.
    ModelEndpoint.objects.filter(pk=audit.student_endpoint_id).update(provider="openai", model="gpt-5-mini")
    after = methods()["methods"]
    assert after["student_temperature"] is None and "not at 0" in after["student_temperature_note"]
    student = next(row for row in after["requests_sent"] if row["role"] == "student")
    assert student["parameters"].startswith("no temperature")
