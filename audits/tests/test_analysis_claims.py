"""The fairness analysis as a job on its AnalysisResult row: a request queues one row once and sends one
message; the task claims the row by compare-and-swap, so a message delivered twice computes once; stale
scores are recomputed; a failure keeps its error until retried; a row whose worker died (or whose message
was lost) is queued again once its lease runs out, and the dead worker can no longer write; progress is
written at most a few times a second; the synchronous door computes a queued row itself but never a row a
live worker holds.

Task bodies are called directly (the task object called in-process); messages are recorded, not sent.
The real worker is in test_results_progress_browser.py.
"""

import time
from datetime import timedelta

import pytest
from django.utils import timezone

from audits import fairness
from audits.fairness import AnalysisParameters
from audits.models import AnalysisResult, TurnScore
from audits.selectors.results import scores_fingerprint
from audits.services import analysis
from audits.services.analysis import (
    AnalysisClaimLost,
    AnalysisState,
    AuditAnalysis,
    analysis_request,
    analysis_retry,
    audit_analysis,
)
from audits.tasks import audit_analysis_task
from audits.tests.engine_factories import scored_audit

pytestmark = pytest.mark.django_db


@pytest.fixture
def sent(monkeypatch, commit_hooks_run) -> list[int]:
    """The analysis ids a request would have sent to the broker, in order."""
    ids: list[int] = []
    monkeypatch.setattr(analysis, "analysis_enqueue", lambda *, analysis_result_id: ids.append(analysis_result_id))
    return ids


@pytest.fixture
def audit():
    return scored_audit("claims audit", questions=16, dimensions=("first_language",))


def _row(audit) -> AnalysisResult:
    return AnalysisResult.objects.get(audit=audit, parameters_hash=analysis.parameters_hash(AnalysisParameters()))


def _change_a_score(audit) -> None:
    score = TurnScore.objects.filter(turn__dialogue__audit=audit, value=2).order_by("pk").first()
    TurnScore.objects.filter(pk=score.pk).update(value=0)


def test_requests_queue_one_row_per_parameters_and_send_one_message(audit, sent):
    first = analysis_request(audit=audit)
    again = analysis_request(audit=audit)
    assert isinstance(first, AnalysisState) and first.status == again.status == "queued"
    assert first.as_dict() == {"status": "queued", "cells_done": 0, "cells_total": 0, "retry_after": 2, "error": ""}
    row = _row(audit)
    assert sent == [row.pk] and row.result == {} and row.lease_until > timezone.now()

    analysis_request(audit=audit, parameters=AnalysisParameters(n_boot=100))
    assert AnalysisResult.objects.filter(audit=audit).count() == 2 and len(sent) == 2


def test_of_two_requests_that_saw_the_same_row_one_queues_it(audit, sent):
    parameters = AnalysisParameters()
    key, fingerprint = analysis.parameters_hash(parameters), scores_fingerprint(audit)
    # Creation: the unique constraint lets one request create the row.
    assert analysis._create_queued(audit, parameters, key, fingerprint, send=True) is True
    assert analysis._create_queued(audit, parameters, key, fingerprint, send=True) is False
    assert audit_analysis_task(_row(audit).pk) == "done"

    # A stale row: both requests read it before either wrote; the compare-and-swap lets one queue it.
    _change_a_score(audit)
    seen = _row(audit)
    assert analysis._requeue(seen, scores_fingerprint(audit), send=True) is True
    assert analysis._requeue(seen, scores_fingerprint(audit), send=True) is False
    assert sent == [seen.pk, seen.pk]


def test_a_message_delivered_twice_computes_once(audit, sent):
    analysis_request(audit=audit)
    row_id = sent[0]
    assert audit_analysis_task(row_id) == "done"
    assert audit_analysis_task(row_id) == "skipped"
    row = _row(audit)
    assert row.status == "done" and row.runs == 1 and row.lease_until is None
    assert row.cells_total > 0 and row.cells_done == row.cells_total
    assert row.started_at <= row.finished_at and row.result["pedagogical"]["rows"]

    found = analysis_request(audit=audit)
    assert isinstance(found, AuditAnalysis) and found.from_cache and len(found.pedagogical.rows) > 0
    assert sent == [row_id]  # a done, current row sends nothing


def test_a_message_is_skipped_while_a_live_worker_holds_the_row(audit, sent):
    analysis_request(audit=audit)
    token = analysis._claim(sent[0], from_statuses=("queued",))
    assert token
    assert audit_analysis_task(sent[0]) == "skipped"
    state = analysis_request(audit=audit)
    assert state.status == "running" and sent == [sent[0]]


def test_stale_scores_are_recomputed_on_the_same_row(audit, sent):
    analysis_request(audit=audit)
    audit_analysis_task(sent[0])
    before = _row(audit)

    _change_a_score(audit)
    state = analysis_request(audit=audit)
    assert state.status == "queued" and sent == [before.pk, before.pk]
    assert _row(audit).result == {}  # the stale result is never served
    assert audit_analysis_task(before.pk) == "done"

    after = analysis_request(audit=audit)
    assert isinstance(after, AuditAnalysis)
    assert after.fingerprint == scores_fingerprint(audit) != before.scores_fingerprint
    assert AnalysisResult.objects.filter(audit=audit).count() == 1 and _row(audit).runs == 2


def test_a_failure_keeps_its_error_until_retried(audit, sent, monkeypatch):
    real = fairness.analyze
    broken = {"on": True}

    def analyze(*args, **kwargs):
        if broken["on"]:
            raise ValueError("planted failure in the statistics")
        return real(*args, **kwargs)

    monkeypatch.setattr(fairness, "analyze", analyze)
    analysis_request(audit=audit)
    assert audit_analysis_task(sent[0]) == "failed"
    row = _row(audit)
    assert row.status == "failed" and "ValueError: planted failure" in row.error and row.finished_at

    # Asked again on the same scores, it stays failed (no loop of failing computations) and says why.
    state = analysis_request(audit=audit)
    assert state.failed and "planted failure" in state.error and state.retry_after == 0
    assert sent == [row.pk]

    broken["on"] = False
    assert analysis_retry(audit=audit).status == "queued" and sent == [row.pk, row.pk]
    assert audit_analysis_task(row.pk) == "done"
    assert isinstance(analysis_request(audit=audit), AuditAnalysis) and _row(audit).error == ""


def test_a_failed_row_on_older_scores_is_recomputed_without_a_retry(audit, sent, monkeypatch):
    monkeypatch.setattr(fairness, "analyze", lambda *a, **k: 1 / 0)
    analysis_request(audit=audit)
    audit_analysis_task(sent[0])
    assert _row(audit).status == "failed"
    _change_a_score(audit)
    assert analysis_request(audit=audit).status == "queued" and len(sent) == 2


def test_a_row_whose_worker_died_is_claimed_again(audit, sent):
    analysis_request(audit=audit)
    row_id = sent[0]
    dead = analysis._claim(row_id, from_statuses=("queued",))  # a worker claims it, then dies
    assert analysis_request(audit=audit).status == "running" and sent == [row_id]

    AnalysisResult.objects.filter(pk=row_id).update(lease_until=timezone.now() - timedelta(seconds=1))
    assert analysis_request(audit=audit).status == "queued" and sent == [row_id, row_id]
    assert audit_analysis_task(row_id) == "done"
    # Had the dead worker only been slow, it can no longer write progress or a result.
    with pytest.raises(AnalysisClaimLost):
        analysis._renew(row_id, dead, cells_done=1)
    assert _row(audit).status == "done"


def test_a_queued_row_whose_message_was_lost_is_sent_again(audit, sent):
    analysis_request(audit=audit)
    AnalysisResult.objects.filter(pk=sent[0]).update(lease_until=timezone.now() - timedelta(seconds=1))
    assert analysis_request(audit=audit).status == "queued"
    assert sent == [sent[0], sent[0]] and AnalysisResult.objects.filter(audit=audit).count() == 1


def test_progress_is_written_at_most_a_few_times_a_second(audit, sent, monkeypatch):
    real = fairness.analyze

    def analyze(scores, design, *, progress, **options):
        for done in range(1, 201):  # 200 callbacks over about one second
            progress(done, 200)
            time.sleep(0.005)
        return real(scores, design, **options)

    writes = []
    renew = analysis._renew
    monkeypatch.setattr(fairness, "analyze", analyze)
    monkeypatch.setattr(analysis, "_renew", lambda *a, **k: writes.append(k) or renew(*a, **k))
    analysis_request(audit=audit)
    started = time.monotonic()
    assert audit_analysis_task(sent[0]) == "done"
    seconds = time.monotonic() - started
    progress_writes = [w for w in writes if "cells_done" in w]
    assert 2 <= len(progress_writes) <= 2 + seconds / analysis.PROGRESS_WRITE_SECONDS
    assert progress_writes[-1] == {"cells_done": 200, "cells_total": 200}
    assert _row(audit).cells_done == _row(audit).cells_total == 200


def test_the_synchronous_door_computes_a_queued_row_and_the_late_message_is_skipped(audit, sent):
    analysis_request(audit=audit)
    calls = []
    found = audit_analysis(audit=audit, progress=lambda done, total: calls.append((done, total)))
    assert not found.from_cache and calls and calls[-1][0] == calls[-1][1]
    assert audit_analysis_task(sent[0]) == "skipped"
    assert audit_analysis(audit=audit).from_cache and _row(audit).runs == 1


def test_the_synchronous_door_never_computes_a_row_a_live_worker_holds(audit, sent):
    analysis_request(audit=audit)
    assert analysis._claim(sent[0], from_statuses=("queued",))
    started = time.monotonic()
    with pytest.raises(TimeoutError):
        audit_analysis(audit=audit, wait_seconds=0.6)
    assert time.monotonic() - started >= 0.6
    assert _row(audit).status == "running" and _row(audit).runs == 1
