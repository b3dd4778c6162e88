"""The judge-corrected page, its downloads, the API and the report section.

On an audit whose judge is harsh on one level while the planted human labels see no gap: the flag the humans do not
support is listed first with its reason; the page explains how to get labels when there are none; researchers only;
the CSV opens in pandas as it is, with the JSON's numbers; the results page, the run page and the HTML report lead
to it."""

import io
import json
import math
import re
from html import unescape

import pandas
import pytest
from django.test import Client
from django.urls import reverse

from audits.judge_corrected_table import CORRECTED_COLUMNS
from audits.services import analysis
from audits.tests.judge_corrected_audit import HARSH_LEVEL, HARSH_METRIC, plant_subset, planted_audit, planted_subset

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("analysis_inline")]

QUERY = {"n_boot": 200}


@pytest.fixture
def planted():
    return planted_audit()


@pytest.fixture
def labelled(planted, monkeypatch):
    audit, before = planted
    subset = planted_subset(audit, before)
    plant_subset(monkeypatch, subset)
    return audit, subset


def _page(client, audit, **query) -> str:
    response = client.get(reverse("audits:results-judge-corrected", args=[audit.pk]), {**QUERY, **query})
    assert response.status_code == 200
    return response.content.decode()


def test_the_unsupported_flag_comes_first_with_its_reason(researcher_client, labelled):
    audit, subset = labelled
    page = _page(researcher_client, audit)
    assert "SIMULATION" in page and "simulation-banner" in page
    assert subset.project_name in page and subset.rubric_label in page and f"{subset.labelled_items} labelled" in page
    assert "PPI++" in page and "pairing by question" in page and "errs wide" in page
    rows = re.findall(r"<tr class=\"[^\"]*disagreement-(\w+)\"[^>]*>", page)
    assert rows[0] == "unsupported" and "none" in rows
    body = page[page.index('id="judge-corrected-table"') :]
    body = body[body.index("<tbody>") :]
    first = body[: body.index("</tr>", body.index("reason-row"))]  # the cell's row and its reason below
    assert f'data-level-b="{HARSH_LEVEL}"' in first and f'data-metric="{HARSH_METRIC}"' in first
    assert "flag not supported by humans" in first and "covers 0" in unescape(first)
    assert "judge cue-sensitive" in first
    assert 'href="/audits/results/' in first and "/pairs/" in first  # the contrast links to its pairs
    # the heatmap draws both readings of the cell
    assert 'class="heatmap judge-corrected"' in page
    drawn = rf'data-level-b="{HARSH_LEVEL}"[^>]*data-metric="{HARSH_METRIC}"[^>]*data-which="judge only"'
    assert re.search(drawn, page)
    assert 'id="cue-sensitive-metrics"' in page


def test_without_labels_the_page_says_how_to_get_them(researcher_client, planted, monkeypatch):
    audit, _ = planted
    plant_subset(monkeypatch, None)
    page = _page(researcher_client, audit)
    assert 'id="judge-corrected-none"' in page
    create = f"{reverse('annotation:judge-validation-create')}?audit={audit.pk}"
    assert f'href="{create}"' in page
    assert "judge-corrected-table" not in page


def test_researchers_only(client, make_user, planted, monkeypatch):
    audit, _ = planted
    plant_subset(monkeypatch, None)
    url = reverse("audits:results-judge-corrected", args=[audit.pk])
    assert client.get(url).status_code == 302  # to the login page
    for role in ("annotator", "adjudicator"):
        other = Client()
        other.force_login(make_user(role))
        assert other.get(url).status_code == 403
        assert other.get(reverse("audits:results-judge-corrected-export", args=[audit.pk])).status_code == 403


def test_while_the_analysis_is_computing_the_page_shows_its_progress(researcher_client, labelled, monkeypatch):
    audit, _ = labelled
    monkeypatch.setattr(analysis, "analysis_enqueue", lambda *, analysis_result_id: None)
    page = _page(researcher_client, audit, seed=99)
    assert "judge-corrected-table" not in page and "SIMULATION" in page
    assert reverse("audits:results-status", args=[audit.pk]) in page


def test_the_results_page_and_the_run_page_link_it_and_name_the_cue_sensitive_metric(researcher_client, labelled):
    audit, _ = labelled
    page = researcher_client.get(reverse("audits:results", args=[audit.pk]), QUERY).content.decode()
    assert reverse("audits:results-judge-corrected", args=[audit.pk]) in page
    note = page[page.index('id="cue-sensitive-note"') :]
    assert HARSH_METRIC in note[: note.index("</p>")]
    assert re.search(r'<strong class="bad">\d+ disagreeing</strong>', page)
    run_page = researcher_client.get(reverse("audits:audit-detail", args=[audit.pk])).content.decode()
    assert 'id="judge-corrected-link"' in run_page


def test_csv_opens_in_pandas_as_it_is_with_the_json_numbers(researcher_client, labelled):
    audit, _ = labelled
    url = reverse("audits:results-judge-corrected-export", args=[audit.pk])
    csv_response = researcher_client.get(url, {**QUERY, "format": "csv"})
    assert csv_response.status_code == 200 and csv_response["Content-Type"].startswith("text/csv")
    assert f"audit-{audit.pk}-judge-corrected-SIMULATION.csv" in csv_response["Content-Disposition"]
    frame = pandas.read_csv(io.StringIO(csv_response.content.decode()))
    assert list(frame.columns) == [*CORRECTED_COLUMNS, "simulation"] and frame["simulation"].all()

    json_response = researcher_client.get(url, {**QUERY, "format": "json"})
    assert f"audit-{audit.pk}-judge-corrected-SIMULATION.json" in json_response["Content-Disposition"]
    payload = json.loads(json_response.content)
    assert set(payload) >= {
        "audit",
        "simulation",
        "label",
        "parameters",
        "alpha",
        "methods",
        "validation",
        "skipped",
        "disagreeing",
        "cue_sensitive_metrics",
        "columns",
        "cells",
    }
    assert payload["simulation"] is True and payload["label"].startswith("SIMULATION")
    assert payload["validation"]["project_name"].startswith("Judge validation of")
    assert payload["disagreeing"] >= 1 and payload["cells"][0]["disagreement"] == "unsupported"
    assert len(frame) == len(payload["cells"])
    for column in ("corrected_estimate", "corrected_ci_low", "judge_only_se", "lambda_a", "cue_p"):
        expected = [math.nan if row[column] is None else row[column] for row in payload["cells"]]
        got = frame[column].tolist()
        assert all(g == e or (math.isnan(g) and math.isnan(e)) for g, e in zip(got, expected, strict=True)), column
    assert researcher_client.get(url, {**QUERY, "format": "xlsx"}).status_code == 404


def test_api_answers_the_table(researcher_client, labelled):
    audit, _ = labelled
    response = researcher_client.get(f"/api/audits/{audit.pk}/results/judge-corrected/", QUERY)
    assert response.status_code == 200
    body = response.json()
    assert body["cells"][0]["disagreement"] == "unsupported" and body["columns"][-1] == "simulation"
    assert set(body["cells"][0]) == {*CORRECTED_COLUMNS, "simulation"}
    assert researcher_client.get(f"/api/audits/{audit.pk}/results/judge-corrected/", {"effect": "x"}).status_code == 400


def test_the_html_report_has_the_section(researcher_client, labelled):
    audit, subset = labelled
    report = researcher_client.get(
        reverse("audits:results-export", args=[audit.pk]), {**QUERY, "format": "html"}
    ).content.decode()
    section = report[report.index('id="judge-corrected"') :]
    section = section[: section.index("Conversation-level metrics")]
    assert subset.project_name in section and "flag not supported by humans" in section and "<svg" in section
    assert "<a href" not in section  # self-contained: no links to the app
