"""Anthropic's OpenAI-compatible endpoint ignores `response_format`: the judge and the reveal check answer prose,
then the object in a ```json fence. The object is read where it stands: no re-ask, no unparsable turn. It takes a
temperature from 0 to 1 and caps a larger one at 1 without a word, so the README says "temperature at most 1"."""

import pytest

from audits.judge import METRICS
from audits.llm.json_reply import reply_object
from audits.models import Audit, Dialogue, LLMCall, Turn, TurnScore
from audits.services.dialogue_batches import audit_run_inline
from audits.tests.openai_server import check_reply, judge_reply
from audits.tests.server_emulations import (
    EmulatedServer,
    emulated_endpoint,
    flavour_content,
    request_rows,
    run_page,
    small_audit,
)

PROMPT = [{"role": "user", "content": "Tutor turn to rate:\nGood try. Look again at your second step."}]


@pytest.mark.parametrize("purpose, plain", [("judge", judge_reply), ("check", check_reply)])
def test_a_fenced_object_after_prose_is_read(purpose, plain):
    reply = flavour_content("anthropic", purpose, PROMPT)
    assert not reply.lstrip().startswith(("{", "```"))  # prose first, as the model writes it
    assert reply_object(reply) == reply_object(plain(PROMPT))


@pytest.mark.django_db
def test_an_audit_judged_by_anthropic_reads_every_reply_without_asking_again(settings):
    settings.AUDIT_RETRY_POLICY = {"max_attempts": 2, "backoff_base": 0.01, "backoff_cap": 0.05}
    with EmulatedServer("anthropic") as claude, EmulatedServer("openai") as plain:
        judge = emulated_endpoint("claude judge", claude, model="claude-sonnet-4-5")
        tutor = emulated_endpoint("tutor", plain)
        audit = small_audit("anthropic judge", tutor=tutor, judge=judge, check=judge)
        assert audit_run_inline(audit=audit) == Audit.Status.FINISHED
        sent = claude.completions()

    assert not Dialogue.objects.filter(audit=audit).exclude(status=Dialogue.Status.DONE).exists()
    tutor_turns = Turn.objects.filter(dialogue__audit=audit, role="tutor")
    assert tutor_turns.count() == 4
    assert set(tutor_turns.values_list("judge_status", flat=True)) == {Turn.JudgeStatus.OK}
    scores = TurnScore.objects.filter(turn__in=tutor_turns)
    assert scores.count() == 4 * len(METRICS) and None not in set(scores.values_list("value", flat=True))
    # One ask each: every request to the judge's server is a first ask (one message), one per ledger row.
    assert {r.purpose for r in sent} == {"judge", "check"}
    assert all(len(r.messages) == 1 for r in sent)
    rows = LLMCall.objects.filter(endpoint=judge)
    assert rows.count() == len(sent) and set(rows.values_list("status", flat=True)) == {LLMCall.Status.OK}


@pytest.mark.django_db
@pytest.mark.parametrize(
    "temperature, decoded",
    [pytest.param(0.7, 0.7, id="at-most-1"), pytest.param(1.5, 1.0, id="above-1-capped")],
)
def test_anthropic_decodes_at_the_stated_temperature_only_up_to_1(temperature, decoded, settings, researcher_client):
    settings.AUDIT_RETRY_POLICY = {"max_attempts": 2, "backoff_base": 0.01, "backoff_cap": 0.05}
    with EmulatedServer("anthropic") as claude, EmulatedServer("openai") as plain:
        tutor = emulated_endpoint("claude tutor", claude, model="claude-sonnet-4-5", temperature=temperature)
        other = emulated_endpoint("plain student and judge", plain)
        audit = small_audit("anthropic tutor", tutor=tutor, student=other, judge=other, t_max=1)
        assert audit_run_inline(audit=audit) == Audit.Status.FINISHED
        sent = claude.completions()

    assert sent and {r.purpose for r in sent} == {"tutor"}
    # The endpoint's temperature is sent as set, and the run page states it...
    assert {r.body["temperature"] for r in sent} == {temperature}
    rows = request_rows(run_page(researcher_client, audit), '<th scope="row">Sent with every request</th>')
    assert rows[0] == f"tutor (claude-sonnet-4-5): temperature {temperature:g}, no token limit"
    # ...but the model decodes at no more than 1: only a temperature of at most 1 is the one stated.
    assert {r.temperature for r in sent} == {decoded}
