"""While the analysis is queued or running, every results page answers at once with the progress state
(polled with htmx), exports and the API answer 202 with {status, cells_done, cells_total, retry_after} and a
Retry-After header; when it is done the poll answers HX-Refresh and the same URLs give the results (200); a
failure shows its error and a retry button on the page, 500 with the error in the API, and the retry queues
it again. Documented in the OpenAPI schema.

Messages are recorded, not sent; the task body is called directly where a worker would run it.
"""

from datetime import timedelta

import pytest
import yaml
from django.urls import reverse
from django.utils import timezone

from audits import fairness
from audits.models import AnalysisResult
from audits.services import analysis
from audits.tasks import audit_analysis_task
from audits.tests.engine_factories import scored_audit

pytestmark = pytest.mark.django_db

PROGRESS_KEYS = {"status", "cells_done", "cells_total", "retry_after", "error"}


@pytest.fixture
def sent(monkeypatch, commit_hooks_run) -> list[int]:
    ids: list[int] = []
    monkeypatch.setattr(analysis, "analysis_enqueue", lambda *, analysis_result_id: ids.append(analysis_result_id))
    return ids


@pytest.fixture
def audit():
    return scored_audit("computing audit", questions=16, dimensions=("first_language",))


def _urls(audit) -> dict[str, str]:
    tutor = audit.tutors.order_by("pk").first().pk
    return {
        "results": reverse("audits:results", args=[audit.pk]),
        "cell": reverse("audits:results-cell", args=[audit.pk])
        + f"?tutor={tutor}&domain=mathematics&kind=explicit&family=within&group=first_language",
        "pairs": reverse("audits:results-pairs", args=[audit.pk])
        + f"?tutor={tutor}&domain=mathematics&kind=explicit&family=within&dimension=first_language"
        "&level_a=english_l1&level_b=non_english_l1&metric=corrective_tone",
        "compare": reverse("audits:results-compare") + f"?left={audit.pk}:{tutor}&right={audit.pk}:{tutor}",
        "status": reverse("audits:results-status", args=[audit.pk]),
        "export": reverse("audits:results-export", args=[audit.pk]) + "?format=csv",
        "api": f"/api/audits/{audit.pk}/results/",
        "api_export": f"/api/audits/{audit.pk}/export/?format=json",
    }


def _assert_202(response, status: str, done: int = 0, total: int = 0) -> None:
    assert response.status_code == 202, response.content[:300]
    assert response["Retry-After"] == "2"
    body = response.json()
    assert set(body) == PROGRESS_KEYS
    assert (body["status"], body["cells_done"], body["cells_total"], body["retry_after"]) == (status, done, total, 2)


def test_progress_while_queued_and_running_then_the_results(researcher_client, audit, sent):
    urls = _urls(audit)
    for name in ("results", "cell", "pairs"):
        page = researcher_client.get(urls[name])
        assert page.status_code == 200
        html = page.content.decode()
        assert "Computing results" in html and "waiting for a worker" in html, name
        assert f'hx-get="{urls["status"]}?' in html and 'hx-trigger="every 1s"' in html
        assert "<svg" not in html and "Methods" not in html  # no result is shown before it exists
    compare = researcher_client.get(urls["compare"]).content.decode()
    assert compare.count("Computing results") == 1 and f"for #{audit.pk} computing audit" in compare
    for name in ("export", "api", "api_export"):
        _assert_202(researcher_client.get(urls[name]), "queued")
    assert len(sent) == 1  # every page asked for the same (audit, default parameters) row

    # A worker is on it and has written its progress.
    AnalysisResult.objects.filter(pk=sent[0]).update(
        status="running", cells_done=1234, cells_total=3915, lease_until=timezone.now() + timedelta(minutes=1)
    )
    poll = researcher_client.get(urls["status"])
    assert poll.status_code == 200 and "HX-Refresh" not in poll
    assert "1,234 of 3,915 cells" in poll.content.decode() and 'hx-trigger="every 1s"' in poll.content.decode()
    _assert_202(researcher_client.get(urls["api"]), "running", 1234, 3915)

    # It finishes: the poll reloads the page, which shows the results; the API and exports give them.
    AnalysisResult.objects.filter(pk=sent[0]).update(status="queued")
    assert audit_analysis_task(sent[0]) == "done"
    poll = researcher_client.get(urls["status"])
    assert poll["HX-Refresh"] == "true"
    page = researcher_client.get(urls["results"]).content.decode()
    assert "Computing results" not in page and "<svg" in page and "Methods" in page
    api = researcher_client.get(urls["api"])
    assert api.status_code == 200 and api.json()["tables"]["contrasts"]
    export = researcher_client.get(urls["export"])
    assert export.status_code == 200 and export["Content-Type"].startswith("text/csv")
    assert researcher_client.get(urls["pairs"]).status_code == 200
    assert len(sent) == 1


def test_other_parameters_are_their_own_computation(researcher_client, audit, sent):
    researcher_client.get(_urls(audit)["results"])
    audit_analysis_task(sent[0])
    page = researcher_client.get(_urls(audit)["results"] + "?n_boot=300&seed=7").content.decode()
    assert "Computing results" in page and "n_boot=300" in page and "seed=7" in page  # the poll asks for them
    assert len(sent) == 2 and AnalysisResult.objects.filter(audit=audit).count() == 2


def test_a_failure_shows_its_error_and_a_retry_queues_it_again(researcher_client, audit, sent, monkeypatch):
    real = fairness.analyze
    broken = {"on": True}

    def analyze(*args, **kwargs):
        if broken["on"]:
            raise ValueError("planted failure in the statistics")
        return real(*args, **kwargs)

    monkeypatch.setattr(fairness, "analyze", analyze)
    urls = _urls(audit)
    researcher_client.get(urls["results"])
    assert audit_analysis_task(sent[0]) == "failed"

    html = researcher_client.get(urls["results"]).content.decode()
    assert "Computing results failed" in html and "ValueError: planted failure in the statistics" in html
    retry_url = reverse("audits:results-retry", args=[audit.pk])
    assert f'action="{retry_url}?' in html and ">Retry</button>" in html
    assert "every 1s" not in html  # a failed computation is not polled
    for name in ("api", "export", "api_export"):
        response = researcher_client.get(urls[name])
        assert response.status_code == 500 and response.json()["status"] == "failed"
        assert "planted failure" in response.json()["error"] and "Retry-After" not in response
    assert len(sent) == 1  # asking again does not loop on a failing computation

    broken["on"] = False
    retried = researcher_client.post(f"{retry_url}?n_boot=2000", HTTP_HX_REQUEST="true")
    assert retried.status_code == 200 and "waiting for a worker" in retried.content.decode()
    assert len(sent) == 2
    assert audit_analysis_task(sent[0]) == "done"
    assert researcher_client.get(urls["api"]).status_code == 200


def test_the_api_retry_and_the_page_retry_without_htmx(researcher_client, audit, sent, monkeypatch):
    monkeypatch.setattr(fairness, "analyze", lambda *a, **k: 1 / 0)
    api = f"/api/audits/{audit.pk}/results/"
    researcher_client.get(api)
    audit_analysis_task(sent[0])
    assert researcher_client.get(api).status_code == 500
    _assert_202(researcher_client.post(api), "queued")
    audit_analysis_task(sent[0])
    redirect = researcher_client.post(reverse("audits:results-retry", args=[audit.pk]))
    assert redirect.status_code == 302 and redirect["Location"].startswith(reverse("audits:results", args=[audit.pk]))
    assert len(sent) == 3


def test_the_schema_documents_202_and_200(researcher_client):
    schema = yaml.safe_load(researcher_client.get("/api/schema/").content)
    results = schema["paths"]["/api/audits/{id}/results/"]
    assert {"200", "202", "500"} <= set(results["get"]["responses"])
    assert "Retry-After" in results["get"]["responses"]["202"]["headers"]
    assert "202" in results["post"]["responses"]
    assert {"200", "202"} <= set(schema["paths"]["/api/audits/{id}/export/"]["get"]["responses"])
    progress = schema["components"]["schemas"]["AnalysisProgress"]["properties"]
    assert set(progress) == {"status", "cells_done", "cells_total", "retry_after", "error"}
