"""The HTML report (its page and its download) is rendered once per analysis and what it shows, then read from the
cache: a second request renders nothing and loads no analysis, and other parameters, a re-analysis after the scores
changed, the audit's own words or the human labels changing give a fresh render that says so."""

from dataclasses import replace

import pytest
from django.urls import reverse

from audits import exports
from audits.models import Audit, TurnScore
from audits.services import analysis as analysis_service
from audits.services.analysis import audit_analysis
from audits.tests.engine_factories import scored_audit
from audits.tests.judge_corrected_audit import HARSH_METRIC, PARAMETERS, plant_subset, planted_audit, planted_subset

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("analysis_inline")]


@pytest.fixture
def counted(monkeypatch):
    """How many times the report was rendered, and how many times a page loaded a stored analysis."""
    calls = {"rendered": 0, "loaded": 0}
    render, load = exports.results_html, analysis_service.ReadyAnalysis.load

    def counted_render(*args, **kwargs):
        calls["rendered"] += 1
        return render(*args, **kwargs)

    def counted_load(self, **kwargs):
        calls["loaded"] += 1
        return load(self, **kwargs)

    monkeypatch.setattr(exports, "results_html", counted_render)
    monkeypatch.setattr(analysis_service.ReadyAnalysis, "load", counted_load)
    return calls


def test_the_report_is_rendered_once_per_analysis_parameters_and_links(researcher_client, counted):
    audit = scored_audit("report cache audit", questions=12, dimensions=("first_language",))
    page_url = reverse("audits:results-report", args=[audit.pk])
    download_url = reverse("audits:results-export", args=[audit.pk])

    first = researcher_client.get(page_url).content.decode()
    assert counted == {"rendered": 1, "loaded": 1}
    again = researcher_client.get(page_url).content.decode()
    assert again == first and counted == {"rendered": 1, "loaded": 1}  # read from the cache, no analysis loaded
    assert "← Results page" in first and "n_boot=2000" in first  # the links it embeds carry the parameters

    # The download: the same report without the page's links, rendered once for its own key.
    downloads = [researcher_client.get(download_url, {"format": "html"}) for _ in range(2)]
    assert downloads[0].content == downloads[1].content and counted["rendered"] == 2
    assert "← Results page" not in downloads[0].content.decode()
    assert downloads[0]["Content-Disposition"].endswith(f'audit-{audit.pk}-report-SIMULATION.html"')

    # Other parameters: another analysis, another render, its numbers and links.
    other = researcher_client.get(page_url, {"n_boot": 200, "seed": 3}).content.decode()
    assert counted["rendered"] == 3 and "n_boot=200&amp;" in other and "n_boot=200&amp;" not in first
    assert researcher_client.get(page_url, {"n_boot": 200, "seed": 3}).content.decode() == other
    assert counted["rendered"] == 3


def test_a_reanalysis_or_a_renamed_audit_renders_the_report_afresh(researcher_client, counted):
    audit = scored_audit("report reanalysis audit", questions=12, dimensions=("first_language",))
    page_url = reverse("audits:results-report", args=[audit.pk])
    before = audit_analysis(audit=audit).fingerprint
    first = researcher_client.get(page_url).content.decode()
    assert counted["rendered"] == 1 and f"scores fingerprint {before[:12]}" in first

    # A judge score changes (a re-scored turn): the scores' fingerprint changes and the analysis is computed again.
    score = TurnScore.objects.filter(turn__dialogue__audit=audit, value=2).order_by("pk").first()
    TurnScore.objects.filter(pk=score.pk).update(value=0)
    after = audit_analysis(audit=audit).fingerprint
    assert after != before
    changed = researcher_client.get(page_url).content.decode()
    assert counted["rendered"] == 2 and f"scores fingerprint {after[:12]}" in changed
    assert f"scores fingerprint {before[:12]}" not in changed

    # Nothing the analysis holds changes, but the audit's name does: the report names it.
    Audit.objects.filter(pk=audit.pk).update(name="report renamed audit")
    renamed = researcher_client.get(page_url).content.decode()
    assert counted["rendered"] == 3 and "report renamed audit" in renamed and "report renamed audit" not in changed


def test_new_or_revised_human_labels_render_the_report_afresh(researcher_client, counted, monkeypatch):
    """The report's judge-corrected section rests on the human labels of the audit's validation project
    (`audits.tests.judge_corrected_audit`): labels that appear, or one that is revised, give a fresh render."""
    audit, before = planted_audit("report labels audit")
    page_url = reverse("audits:results-report", args=[audit.pk])
    query = {"n_boot": PARAMETERS.n_boot}
    plant_subset(monkeypatch, None)
    without = researcher_client.get(page_url, query).content.decode()
    subset = planted_subset(audit, before)
    plant_subset(monkeypatch, subset)
    labelled = researcher_client.get(page_url, query).content.decode()
    assert counted["rendered"] == 2 and labelled != without
    assert subset.project_name in labelled and subset.project_name not in without
    assert researcher_client.get(page_url, query).content.decode() == labelled and counted["rendered"] == 2

    turn, (value, probability) = next(iter(subset.values[HARSH_METRIC].items()))
    revised = {**subset.values[HARSH_METRIC], turn: ((value + 1) % 3, probability)}
    plant_subset(monkeypatch, replace(subset, values={HARSH_METRIC: revised}))
    researcher_client.get(page_url, query)
    assert counted["rendered"] == 3
