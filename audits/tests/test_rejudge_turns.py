"""Re-judging an audit's unparsable and failed turns (services.judging): the turns are asked afresh —
never served the answer the ledger recorded unparsable — and their scores replace the old ones; the
action is on the audit page, the API and `run_audit --rejudge`, and queues one task."""

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from audits.models import Audit, LLMCall, Turn, TurnScore
from audits.selectors.runs import audit_progress
from audits.services.audit_lifecycle import audit_create
from audits.services.dialogue_batches import audit_run_inline
from audits.services.judging import audit_turns_rejudge_run, turns_judge
from audits.tests.engine_factories import explicit_conditions, make_questions, simulation_endpoint

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("commit_hooks_run")]  # tasks are sent on commit


@pytest.fixture
def audit():
    tutor = simulation_endpoint("rejudge-tutor")
    other = simulation_endpoint("rejudge-other")
    audit = audit_create(
        name="rejudge audit",
        tutors=[tutor],
        student_endpoint=other,
        judge_endpoint=other,
        questions=make_questions(2),
        conditions=explicit_conditions(),
        t_max=2,
    )
    assert audit_run_inline(audit=audit) == Audit.Status.FINISHED
    return audit


def spoil(audit, count=3):
    """Make `count` judged turns look as a bad judge left them: the first unparsable (its judge call
    recorded unparsable in the ledger), the others failed. Returns the turns and the spoiled calls."""
    turns = list(Turn.objects.filter(dialogue__audit=audit, judge_status=Turn.JudgeStatus.OK).order_by("pk")[:count])
    calls = []
    for number, turn in enumerate(turns):
        status = Turn.JudgeStatus.UNPARSABLE if number == 0 else Turn.JudgeStatus.FAILED
        score = TurnScore.objects.filter(turn=turn).first()
        if number == 0:
            LLMCall.objects.filter(pk=score.judge_call_id).update(status=LLMCall.Status.UNPARSABLE)
            calls.append(score.judge_call_id)
        TurnScore.objects.filter(turn=turn).update(value=None, status=status, raw="prose")
        Turn.objects.filter(pk=turn.pk).update(judge_status=status)
    return turns, calls


def test_rejudging_asks_afresh_and_stores_the_new_scores(audit):
    turns, spoiled_calls = spoil(audit)
    before = set(LLMCall.objects.values_list("pk", flat=True))
    assert audit_progress(audit=audit)["turns_unparsable"] == 1
    assert audit_progress(audit=audit)["turns_judge_failed"] == 2

    counts = audit_turns_rejudge_run(audit_id=audit.pk)

    assert counts["turns"] == 3 and counts["scored"] == 3
    # The unparsable answer was not served: its request went out again under a new attempt key.
    assert counts["calls_sent"] == 1 and counts["calls_cached"] == 2
    (new_call,) = LLMCall.objects.exclude(pk__in=before)
    assert new_call.status == LLMCall.Status.OK and new_call.request == LLMCall.objects.get(pk=spoiled_calls[0]).request
    assert LLMCall.objects.get(pk=spoiled_calls[0]).status == LLMCall.Status.UNPARSABLE
    for turn in turns:
        turn.refresh_from_db()
        assert turn.judge_status == Turn.JudgeStatus.OK
        scores = TurnScore.objects.filter(turn=turn)
        assert scores.count() == 5 and None not in set(scores.values_list("value", flat=True))
    assert turns[0].scores.first().judge_call_id == new_call.pk
    progress = audit_progress(audit=audit)
    assert progress["turns_unparsable"] == 0 and progress["turns_judge_failed"] == 0
    # Nothing left: a second run (a task delivered twice) asks nothing.
    assert audit_turns_rejudge_run(audit_id=audit.pk)["turns"] == 0


def test_turns_judge_builds_the_engines_request(audit):
    """Judging stored turns later sends nothing the engine already asked: the same requests."""
    ids = list(Turn.objects.filter(dialogue__audit=audit, role="tutor").values_list("pk", flat=True))
    result = turns_judge(turn_ids=ids, judge_endpoint=audit.judge_endpoint, judge_template=audit.judge_template)
    assert result.calls_sent == 0 and result.calls_cached == len(ids)
    stored = {t.pk: t for t in Turn.objects.filter(pk__in=ids).prefetch_related("scores")}
    for turn_id, judgement in result.judgements.items():
        assert judgement.scores == {s.metric: s.value for s in stored[turn_id].scores.all()}


@pytest.fixture
def queued(monkeypatch):
    sent = []
    monkeypatch.setattr("audits.tasks.audit_turns_rejudge_task.apply_async", lambda args, **kw: sent.append(args))
    return sent


def test_the_page_button_queues_the_rejudging(researcher_client, audit, queued):
    url = reverse("audits:audit-detail", args=[audit.pk])
    assert "Re-judge unparsable and failed turns" not in researcher_client.get(url).content.decode()
    spoil(audit)
    page = researcher_client.get(url).content.decode()
    assert "Re-judge unparsable and failed turns (3)" in page and 'id="turns-judge-failed">2<' in page
    response = researcher_client.post(reverse("audits:audit-action", args=[audit.pk, "rejudge"]), follow=True)
    assert queued == [(audit.pk,)]
    assert "Re-judging 3 unparsable and failed turns on the workers." in response.content.decode()


def test_the_api_queues_the_rejudging_and_refuses_others(researcher_client, annotator, audit, queued):
    spoil(audit, count=2)
    url = f"/api/audits/{audit.pk}/rejudge/"
    other = Client()
    other.force_login(annotator)
    assert other.post(url).status_code == 403 and queued == []
    response = researcher_client.post(url)
    assert response.status_code == 200 and response.json()["result"] == 2 and queued == [(audit.pk,)]
    schema = researcher_client.get("/api/schema/", {"format": "json"}).json()
    assert "re-judging" in schema["paths"]["/api/audits/{id}/rejudge/"]["post"]["description"]


def test_the_command_rejudges_inline_or_on_the_workers(audit, queued, capsys):
    spoil(audit, count=2)
    call_command("run_audit", str(audit.pk), "--rejudge")
    assert queued == [(audit.pk,)] and "Re-judging 2 unparsable" in capsys.readouterr().out
    call_command("run_audit", str(audit.pk), "--rejudge", "--inline")
    assert "Re-judged 2 turns: 2 scored" in capsys.readouterr().out
    assert audit_progress(audit=audit)["turns_judge_failed"] == 0


def test_the_command_judges_every_turn_under_another_rubric_version(audit, monkeypatch, capsys):
    from audits.services.design import prompt_template_revise
    from audits.services.judge_runs import audit_rejudge_run

    sent = []
    monkeypatch.setattr("audits.services.judge_runs._enqueue", lambda run: sent.append(run.pk))
    rubric = prompt_template_revise(
        template=audit.judge_template, text=audit.judge_template.text + "\nBe strict.", description="v2"
    )
    turns = Turn.objects.filter(dialogue__audit=audit, role="tutor", dialogue__status="done").count()

    call_command("run_audit", str(audit.pk), "--rubric", str(rubric.pk))
    assert len(sent) == 1 and f"Judging {turns} turns under" in capsys.readouterr().out
    assert audit_rejudge_run(run_id=sent[0]) == "done"
    assert (
        TurnScore.objects.filter(turn__dialogue__audit=audit, rubric=rubric).values("turn").distinct().count() == turns
    )
    # the audit's own scores are untouched; a bad id is a clear error
    assert TurnScore.objects.filter(turn__dialogue__audit=audit, rubric=audit.judge_template).count()
    with pytest.raises(Exception, match="no prompt template 999999"):
        call_command("run_audit", str(audit.pk), "--rubric", "999999")
    with pytest.raises(Exception, match="--judge goes with --rubric"):
        call_command("run_audit", str(audit.pk), "--judge", "1")
