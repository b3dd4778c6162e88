"""Judging through the Batch API against a local files + batches server: the output and error files
read back into one outcome per request (pure), and re-judging a finished audit under a new rubric version
by batch — answers at the batch price, failed lines as failed calls that the next run asks again, and no
chat call and no line asked twice."""

import json

import pytest
from django.db.models import Count

from audits.judge import METRICS
from audits.llm import batch as batchlib
from audits.models import Dialogue, JudgeBatch, JudgeRun, LLMCall, Turn, TurnScore
from audits.selectors.runs import audit_progress
from audits.services.audit_lifecycle import audit_create
from audits.services.design import prompt_template_revise
from audits.services.dialogue_batches import audit_run_inline
from audits.services.judge_runs import audit_rejudge_open, audit_rejudge_run
from audits.tests.engine_factories import explicit_conditions, make_questions, openai_endpoint
from audits.tests.openai_batch_server import BatchTestServer


def _line(custom_id, status=200, content="hi", error=None):
    body = {"choices": [{"message": {"content": content}}], "usage": {"prompt_tokens": 3, "completion_tokens": 1}}
    response = None if status is None else {"status_code": status, "body": body if status == 200 else {}}
    return json.dumps({"custom_id": custom_id, "response": response, "error": error})


def test_output_and_error_files_map_to_one_outcome_per_request():
    output = "\n".join(
        [
            _line("a"),
            _line("b", content=""),
            "{not json",
            _line("z"),  # not in the batch: ignored
            _line("r", content="<think>the answer is 12</think>\nhi"),  # read as an online answer is
            json.dumps({"custom_id": "c", "response": {"status_code": 200, "body": "<html>"}, "error": None}),
        ]
    )
    errors = "\n".join(
        [_line("d", status=500), _line("e", status=None, error={"code": "batch_expired", "message": "x"})]
    )
    results = batchlib.batch_results(output, errors, ["a", "b", "c", "d", "e", "f", "r"])
    assert set(results.outcomes) == {"a", "b", "c", "d", "e", "f", "r"}
    assert results.outcomes["r"].text == "hi" and results.outcomes["r"].reasoning == "the answer is 12"
    assert results.outcomes["a"].ok and results.outcomes["a"].text == "hi"
    assert results.outcomes["a"].prompt_tokens == 3
    assert [k for k, o in sorted(results.outcomes.items()) if not o.ok] == ["b", "c", "d", "e", "f"]
    assert "empty content" in results.outcomes["b"].error
    assert "not JSON but text" in results.outcomes["c"].error
    assert "HTTP 500" in results.outcomes["d"].error
    assert "batch_expired" in results.outcomes["e"].error
    assert "missing" in results.outcomes["f"].error
    assert results.unreadable == 1


def test_error_lines_keep_the_servers_words_in_every_shape():
    def parsed(response=None, error=None):
        return batchlib.output_line_parse(json.dumps({"custom_id": "a", "response": response, "error": error}))

    openai_body = {"error": {"message": "Invalid model", "type": "invalid_request_error", "code": "model_not_found"}}
    vllm_body = {"object": "error", "message": "context too long", "type": "BadRequestError", "code": 400}
    assert parsed({"status_code": 400, "body": openai_body}).error == (
        "batch line: HTTP 400: Invalid model; code model_not_found"
    )
    assert parsed({"status_code": 400, "body": vllm_body}).error.startswith("batch line: HTTP 400: context too long")
    # vLLM's error object under a 200 is an error, not an answer.
    assert not parsed({"status_code": 200, "body": vllm_body}).ok
    assert "context too long" in parsed({"status_code": 200, "body": vllm_body}).error
    assert parsed(error="engine died").error == "batch line: engine died"
    assert parsed({"status_code": 502, "body": "Bad gateway"}).error == "batch line: HTTP 502: Bad gateway"
    expired = parsed(error={"code": "batch_expired", "message": "not run before the window closed"})
    assert expired.unrun and "not run before the window closed" in expired.error


@pytest.fixture
def finished_audit(settings):
    """A small finished audit judged online by the local server, and a batch-capable judge on it."""
    settings.JUDGE_BATCH_POLL_SECONDS = 0.05
    with BatchTestServer(batch_seconds=0.2) as server:
        tutor = openai_endpoint("batch-tutor", server.base_url, max_concurrency=4)
        other = openai_endpoint("batch-other", server.base_url, max_concurrency=4)
        audit = audit_create(
            name="batch re-judge",
            tutors=[tutor],
            student_endpoint=other,
            judge_endpoint=other,
            questions=make_questions(2),
            conditions=explicit_conditions(),
        )
        assert audit_run_inline(audit=audit) == "finished"
        audit.refresh_from_db()
        judge = openai_endpoint(
            "batch-judge", server.base_url, batch_capable=True, price_input_per_million=2, price_output_per_million=4
        )
        rubric = prompt_template_revise(
            template=audit.judge_template, text=audit.judge_template.text + "\nBe strict.", description="v2"
        )
        yield server, audit, judge, rubric


def _scored_under(audit, rubric) -> dict:
    rows = TurnScore.objects.filter(turn__dialogue__audit=audit, rubric=rubric)
    return dict(rows.values_list("status").annotate(n=Count("pk")).values_list("status", "n"))


@pytest.mark.django_db
def test_rejudge_by_batch_prices_answers_and_asks_failed_lines_again(finished_audit):
    server, audit, judge, rubric = finished_audit
    turns = Turn.objects.filter(dialogue__audit=audit, dialogue__status=Dialogue.Status.DONE, role="tutor").count()
    assert turns >= 4
    chat_before = len(server.served)
    server.batch.fail_lines = 2
    # The failed lines' bodies as vLLM and a plain-text proxy write them: their words reach the ledger and the run.
    vllm = {
        "object": "error",
        "message": "maximum context length is 4096 tokens",
        "type": "BadRequestError",
        "code": 400,
    }
    server.batch.error_bodies = [vllm, "upstream connect error"]

    run = audit_rejudge_open(audit=audit, judge_template=rubric, judge_endpoint=judge)
    assert run.via_batch and run.total == turns
    assert audit_rejudge_run(run_id=run.pk) == JudgeRun.Status.DONE_WITH_FAILURES
    # One line per distinct request (turns asked the same are one ledger row, one line); two lines failed.
    batch = JudgeBatch.objects.get(run=run)
    assert (
        batch.status == "collected" and batch.lines <= turns and (batch.answered, batch.failed) == (batch.lines - 2, 2)
    )
    # Every turn judged once under the new rubric; those whose line failed are judged "failed".
    scored = _scored_under(audit, rubric)
    assert sum(scored.values()) == turns * len(METRICS) and scored["failed"] >= 2 * len(METRICS)
    answered = LLMCall.objects.filter(batch=batch, status="ok")
    assert answered.count() == batch.lines - 2 and {c.price_factor for c in answered} == {0.5}
    errors = sorted(LLMCall.objects.filter(batch=batch, status="failed").values_list("error", flat=True))
    assert len(errors) == 2
    assert any("HTTP 500: maximum context length is 4096 tokens" in e for e in errors)
    assert any("HTTP 500: upstream connect error" in e for e in errors)
    run.refresh_from_db()
    assert run.scored < run.total and run.calls_sent == batch.lines
    assert f"{run.total - run.scored} of {run.total} turns not scored" in run.error
    assert "maximum context length is 4096 tokens" in run.error
    # The audit's cost counts them at the batch price.
    [row] = [r for r in audit_progress(audit=audit)["cost_by_endpoint"] if r["endpoint"] == "batch-judge"]
    assert row["cost"] == pytest.approx(0.5 * (2 * row["prompt_tokens"] + 4 * row["completion_tokens"]) / 1e6)
    assert row["cost"] > 0
    # The audit's own rubric and judge status are untouched.
    assert not TurnScore.objects.filter(turn__dialogue__audit=audit, rubric=audit.judge_template, status="failed")

    # A second run asks only the two failed lines again (one new batch), and every turn is scored.
    again = audit_rejudge_open(audit=audit, judge_template=rubric, judge_endpoint=judge)
    assert again.pk != run.pk
    assert audit_rejudge_run(run_id=again.pk) == JudgeRun.Status.DONE
    again.refresh_from_db()
    assert (again.scored, again.error, again.calls_sent) == (turns, "", 2)
    assert _scored_under(audit, rubric) == {"ok": turns * len(METRICS)}
    assert JudgeBatch.objects.get(run=again).lines == 2
    assert server.batches_created == 2
    lines = server.lines_answered
    assert sum(lines.values()) == batch.lines + 2 and sorted(lines.values()).count(2) == 2
    # Nothing went online: the batch path sent no chat call.
    assert len(server.served) == chat_before


@pytest.mark.django_db
def test_a_round_larger_than_one_batch_file_goes_in_several_batches(finished_audit, monkeypatch):
    """The provider takes at most 50,000 requests (200 MB) per batch file; a larger round is split, each
    request asked in exactly one batch."""
    server, audit, judge, rubric = finished_audit
    monkeypatch.setattr(batchlib, "MAX_LINES", 3)
    turns = Turn.objects.filter(dialogue__audit=audit, dialogue__status=Dialogue.Status.DONE, role="tutor").count()

    run = audit_rejudge_open(audit=audit, judge_template=rubric, judge_endpoint=judge)
    assert audit_rejudge_run(run_id=run.pk) == JudgeRun.Status.DONE
    batches = list(JudgeBatch.objects.filter(run=run))
    lines = sum(b.lines for b in batches)
    assert lines > 3 and len(batches) == -(-lines // 3) == server.batches_created
    assert all(b.lines <= 3 and b.status == "collected" for b in batches)
    assert sorted(server.lines_answered.values()) == [1] * lines  # no request in two batches
    assert _scored_under(audit, rubric) == {"ok": turns * len(METRICS)}
