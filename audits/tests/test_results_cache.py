"""Analysis results are cached per (audit, parameters) and recomputed when the audit's scores change;
a cached result gives exactly the numbers a fresh computation gives."""

import math

import pytest

from audits.fairness import AnalysisParameters
from audits.models import AnalysisResult, TurnScore
from audits.services.analysis import audit_analysis
from audits.tests.test_results_pages import results_audit

pytestmark = pytest.mark.django_db


def _same(a, b) -> bool:
    return all(x == y or (isinstance(x, float) and math.isnan(x) and math.isnan(y)) for x, y in zip(a, b, strict=True))


def test_cache_per_parameters_and_recompute_when_scores_change():
    audit = results_audit()
    first = audit_analysis(audit=audit)
    assert not first.from_cache and AnalysisResult.objects.filter(audit=audit).count() == 1

    again = audit_analysis(audit=audit)
    assert again.from_cache
    for fresh, cached in zip(first.pedagogical.rows, again.pedagogical.rows, strict=True):
        assert _same(fresh.as_dict().values(), cached.as_dict().values())
    assert len(again.conversation.rows) == len(first.conversation.rows) > 0

    other = audit_analysis(audit=audit, parameters=AnalysisParameters(n_boot=200, seed=3))
    assert not other.from_cache and AnalysisResult.objects.filter(audit=audit).count() == 2
    assert other.parameters.n_boot == 200

    # A judge score changes (e.g. a re-scored turn): the fingerprint changes, the analysis is recomputed.
    score = TurnScore.objects.filter(turn__dialogue__audit=audit, metric="corrective_tone", value=2).first()
    TurnScore.objects.filter(pk=score.pk).update(value=0)
    changed = audit_analysis(audit=audit)
    assert not changed.from_cache and changed.fingerprint != first.fingerprint
    assert AnalysisResult.objects.filter(audit=audit).count() == 2  # the row was replaced, not added
    tutor = score.turn.dialogue.tutor_id
    condition = score.turn.dialogue.condition
    before = [r for r in first.pedagogical.rows if r.tutor == tutor and r.metric == "corrective_tone"]
    after = [r for r in changed.pedagogical.rows if r.tutor == tutor and r.metric == "corrective_tone"]
    touched = [
        (b.r, a.r)
        for b, a in zip(before, after, strict=True)
        if condition.level in (b.level_a, b.level_b) or (condition.kind == "control" and b.level_a == "control")
    ]
    assert touched and any(b != a for b, a in touched)
    assert audit_analysis(audit=audit).from_cache


def test_the_results_page_renders_its_analysis_parts_once_per_analysis_and_query(
    researcher_client, analysis_inline, monkeypatch
):
    from django.urls import reverse

    from audits import exports
    from audits.models import Dialogue

    audit = results_audit("page parts audit", questions=16)
    built = []
    export_tables = exports.export_tables
    monkeypatch.setattr(exports, "export_tables", lambda *a, **k: built.append(1) or export_tables(*a, **k))
    url = reverse("audits:results", args=[audit.pk])

    first, again = (researcher_client.get(url).content.decode() for _ in range(2))
    assert len(built) == 1 and first.split("<main", 1)[1] == again.split("<main", 1)[1]
    assert 'id="violations"' in again and '<span class="bad">1 failed</span>' not in again

    filtered = researcher_client.get(url, {"violations": "on"}).content.decode()
    assert len(built) == 2 and "(filtered)" in filtered

    # A dialogue fails after the analysis: the analysis and what stands behind its cells change, and so does the page.
    Dialogue.objects.filter(pk=audit.dialogues.order_by("pk").first().pk).update(status=Dialogue.Status.FAILED)
    changed = researcher_client.get(url).content.decode()
    assert len(built) == 3 and '<span class="bad">1 failed</span>' in changed
