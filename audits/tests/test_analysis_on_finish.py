"""An audit's default analysis starts when the audit finishes, not when someone opens it: the call that finishes
the audit queues it once (on commit); new scores from re-judging a finished audit queue it again; a results page
opened afterwards shows the results at once, with nothing left to compute."""

import pytest
from django.urls import reverse

from audits.fairness import AnalysisParameters
from audits.models import AnalysisResult, Audit, Dialogue, Turn, TurnScore
from audits.services import analysis
from audits.services.analysis import audit_analysis
from audits.services.audit_lifecycle import audit_create, audit_refresh_status, audit_start_inline
from audits.services.judge_runs import audit_rejudge_open, audit_rejudge_run
from audits.services.judging import audit_turns_rejudge_run
from audits.tasks import audit_run_batch_task
from audits.tests.engine_factories import explicit_conditions, make_questions, scored_audit, simulation_endpoint


@pytest.fixture(autouse=True)
def analysis_on_finish(settings):
    settings.ANALYSIS_ON_FINISH = True


@pytest.fixture
def sent(monkeypatch, commit_hooks_run) -> list[int]:
    """The analysis ids that would have been sent to the broker, in order."""
    ids: list[int] = []
    monkeypatch.setattr(analysis, "analysis_enqueue", lambda *, analysis_result_id: ids.append(analysis_result_id))
    return ids


def _default_row(audit) -> AnalysisResult | None:
    key = analysis.parameters_hash(AnalysisParameters())
    return AnalysisResult.objects.filter(audit=audit, parameters_hash=key).first()


@pytest.mark.django_db
def test_the_call_that_finishes_an_audit_queues_its_default_analysis_once(sent, django_capture_on_commit_callbacks):
    audit = scored_audit("finishing audit", questions=4, dimensions=("first_language",))
    Audit.objects.filter(pk=audit.pk).update(status=Audit.Status.RUNNING, finished_at=None)
    with django_capture_on_commit_callbacks(execute=True):
        assert audit_refresh_status(audit_id=audit.pk) == Audit.Status.FINISHED
    row = _default_row(audit)
    assert row is not None and row.status == AnalysisResult.Status.QUEUED and sent == [row.pk]

    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        assert audit_refresh_status(audit_id=audit.pk) == Audit.Status.FINISHED  # already finished: no flip
    assert callbacks == [] and sent == [row.pk]


@pytest.mark.django_db
def test_an_audit_with_open_work_queues_nothing(sent, django_capture_on_commit_callbacks):
    audit = scored_audit("open audit", questions=4, dimensions=("first_language",))
    Audit.objects.filter(pk=audit.pk).update(status=Audit.Status.RUNNING, finished_at=None)
    Dialogue.objects.filter(pk=audit.dialogues.order_by("pk").first().pk).update(status=Dialogue.Status.PENDING)
    with django_capture_on_commit_callbacks(execute=True):
        assert audit_refresh_status(audit_id=audit.pk) == Audit.Status.RUNNING
    assert _default_row(audit) is None and sent == []


@pytest.mark.django_db
def test_an_audit_whose_every_dialogue_failed_or_the_setting_off_queues_nothing(
    sent, settings, django_capture_on_commit_callbacks
):
    failed = scored_audit("failed audit", questions=4, dimensions=("first_language",))
    Audit.objects.filter(pk=failed.pk).update(status=Audit.Status.RUNNING, finished_at=None)
    failed.dialogues.update(status=Dialogue.Status.FAILED)
    off = scored_audit("setting off", questions=4, dimensions=("first_language",))
    Audit.objects.filter(pk=off.pk).update(status=Audit.Status.RUNNING, finished_at=None)
    with django_capture_on_commit_callbacks(execute=True):
        assert audit_refresh_status(audit_id=failed.pk) == Audit.Status.FINISHED
    settings.ANALYSIS_ON_FINISH = False
    with django_capture_on_commit_callbacks(execute=True):
        assert audit_refresh_status(audit_id=off.pk) == Audit.Status.FINISHED
    assert _default_row(failed) is None and _default_row(off) is None and sent == []


@pytest.mark.django_db
def test_an_audit_run_by_the_worker_task_is_analysed_before_anyone_opens_it(analysis_inline, researcher_client):
    endpoint = simulation_endpoint("on-finish student+judge")
    audit = audit_create(
        name="analysed on finish",
        tutors=[simulation_endpoint("on-finish tutor")],
        student_endpoint=endpoint,
        judge_endpoint=endpoint,
        questions=make_questions(2, prefix="on-finish"),
        conditions=explicit_conditions(),
        t_max=2,
    )
    audit_start_inline(audit=audit)
    audit_run_batch_task(audit.pk, list(audit.dialogues.values_list("pk", flat=True)))

    audit.refresh_from_db()
    row = _default_row(audit)
    assert audit.status == Audit.Status.FINISHED
    assert row is not None and row.status == AnalysisResult.Status.DONE and row.n_scores > 0
    page = researcher_client.get(reverse("audits:results", args=[audit.pk]))
    assert page.status_code == 200 and b"What this audit found" in page.content
    assert AnalysisResult.objects.filter(audit=audit).count() == 1 and _default_row(audit).runs == 1


@pytest.mark.django_db
def test_rejudging_a_finished_audits_turns_queues_its_analysis_again(sent):
    audit = scored_audit("rejudged audit", tutors=1, questions=2, dimensions=("first_language",))
    audit_analysis(audit=audit)
    turn = Turn.objects.filter(dialogue__audit=audit, role=Turn.Role.TUTOR).order_by("pk").first()
    TurnScore.objects.filter(turn=turn).update(value=None, status=TurnScore.Status.FAILED)
    Turn.objects.filter(pk=turn.pk).update(judge_status=Turn.JudgeStatus.FAILED)
    assert sent == []

    assert audit_turns_rejudge_run(audit_id=audit.pk)["turns"] == 1
    row = _default_row(audit)
    assert row.status == AnalysisResult.Status.QUEUED and sent == [row.pk]


@pytest.mark.django_db
def test_a_judging_run_under_the_audits_own_rubric_queues_its_analysis_again(sent, monkeypatch):
    monkeypatch.setattr("audits.services.judge_runs._enqueue", lambda run, countdown=None: None)
    audit = scored_audit("rejudge run audit", tutors=1, questions=2, dimensions=("first_language",))
    audit_analysis(audit=audit)
    run = audit_rejudge_open(audit=audit, judge_template=audit.judge_template)

    assert audit_rejudge_run(run_id=run.pk) == "done"
    row = _default_row(audit)
    assert row.status == AnalysisResult.Status.QUEUED and sent == [row.pk]
