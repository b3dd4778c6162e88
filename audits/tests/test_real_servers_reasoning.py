"""Reasoning models as real servers send them: `reasoning_content` (vLLM ≤ 0.10 with a parser, SGLang, llama.cpp),
`reasoning` (vLLM ≥ 0.11, Ollama ≥ 0.9, OpenRouter), `<think>` blocks in the content (vLLM without a parser,
Ollama < 0.9, LM Studio, Groq raw), DeepSeek-R1-Distill's tag-less `…</think>` and reasoning cut off by the budget.

The reasoning states the reference answer (the emulations' reasoning says the reveal phrase the reveal check
looks for): none of it may reach a stored turn, a student, judge or reveal-check prompt, a conversation metric,
or the reply kept on the ledger; it is kept apart on the ledger row and shown folded on the transcript page.
"""

import asyncio
import json
from collections import Counter
from html.parser import HTMLParser

import pytest
from django.urls import reverse

from audits.judge import conversation_metrics
from audits.llm.calls import CallRequest, EndpointConfig, PermanentError
from audits.llm.openai_compat import OpenAICompatProvider
from audits.models import Audit, Dialogue, LLMCall, Turn
from audits.services.dialogue_batches import audit_run_inline
from audits.tests.openai_server import student_reply, tutor_reply
from audits.tests.server_emulations import (
    REASONING_ANSWER,
    REASONING_MARK,
    EmulatedServer,
    connection_tests,
    emulated_endpoint,
    page_text,
    small_audit,
)

FIELD_FLAVOURS = ["vllm_parser", "vllm_reasoning", "openrouter", "ollama"]
TAG_FLAVOURS = ["think_tags", "r1_distill", "lmstudio"]

# What the plain server's tutor and student say over two tutor turns: the visible replies every flavour sends.
STUDENT_FIRST = student_reply([])
TUTOR_FIRST = tutor_reply([])
STUDENT_SECOND = student_reply([{"role": "assistant", "content": STUDENT_FIRST}])
TUTOR_SECOND = tutor_reply([{"role": "assistant", "content": TUTOR_FIRST}])
VISIBLE_DIALOGUE = [
    ("student", STUDENT_FIRST),
    ("tutor", TUTOR_FIRST),
    ("student", STUDENT_SECOND),
    ("tutor", TUTOR_SECOND),
]


def send(server: EmulatedServer, purpose: str = "tutor", **endpoint_fields):
    """One request through the OpenAI-compatible provider, as the client makes it."""
    endpoint = EndpointConfig(
        key=f"emulated:{server.flavour}",
        provider="openai",
        model="test-model",
        base_url=server.base_url,
        **endpoint_fields,
    )
    provider = OpenAICompatProvider(endpoint)
    request = CallRequest(endpoint=endpoint, purpose=purpose, messages=[{"role": "user", "content": "Hi, 6 x 7?"}])

    async def go():
        try:
            return await provider.send(request)
        finally:
            await provider.close()

    return asyncio.run(go())


@pytest.mark.parametrize("flavour", FIELD_FLAVOURS + TAG_FLAVOURS)
def test_the_provider_keeps_only_the_visible_reply_and_the_reasoning_apart(flavour):
    with EmulatedServer(flavour) as server:
        reply = send(server)
    assert reply.text == TUTOR_FIRST
    assert REASONING_MARK in reply.reasoning and REASONING_ANSWER in reply.reasoning
    assert "think>" not in reply.text and "think>" not in reply.reasoning


def test_reasoning_tokens_are_read_from_the_usage_where_the_server_reports_them():
    with EmulatedServer("openrouter") as server:
        reply = send(server)
    assert reply.reasoning_tokens == len(reply.reasoning.split()) > 0
    assert reply.completion_tokens == reply.reasoning_tokens + len(reply.text.split())


@pytest.mark.parametrize("parser", [False, True], ids=["think-tag-unclosed", "vllm-parser-content-null"])
def test_reasoning_cut_off_by_the_budget_is_no_reply(parser):
    with EmulatedServer("truncated", parser=parser) as server:
        with pytest.raises(PermanentError) as refused:
            send(server, max_tokens=64)
    assert "budget" in str(refused.value) and "64" in str(refused.value)
    assert REASONING_MARK not in str(refused.value)
    assert refused.value.usage.completion_tokens > 0  # billed all the same


class DetailsText(HTMLParser):
    """A page's text, split into what sits inside a <details> element (folded) and what does not."""

    def __init__(self) -> None:
        super().__init__()
        self.depth = 0
        self.folded: list[str] = []
        self.shown: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag == "details":
            self.depth += 1

    def handle_endtag(self, tag):
        if tag == "details" and self.depth:
            self.depth -= 1

    def handle_data(self, data):
        (self.folded if self.depth else self.shown).append(data)


def no_reasoning(text: str) -> bool:
    return REASONING_MARK not in text and REASONING_ANSWER not in text and "think>" not in text


pytestmark_db = pytest.mark.django_db


@pytest.fixture
def settle(settings):
    settings.AUDIT_RETRY_POLICY = {"max_attempts": 5, "backoff_base": 0.01, "backoff_cap": 0.05}


@pytestmark_db
@pytest.mark.parametrize(
    "flavour, fields",
    [
        ("vllm_parser", {}),
        ("vllm_reasoning", {}),
        ("openrouter", {}),
        ("think_tags", {}),
        ("r1_distill", {}),
        # Set as the README says for R1-Distill, with a budget its reasoning fits in: the reply after </think>.
        pytest.param("r1_distill", {"reasoning_format": "tags", "max_tokens": 500}, id="r1_distill-tags"),
        # Groq's reasoning models, asked as the README says: the reasoning in a field, or raw in tags.
        pytest.param("groq", {"extra_params": {"reasoning_format": "parsed"}}, id="groq-parsed"),
        pytest.param("groq", {"extra_params": {"reasoning_format": "raw"}}, id="groq-raw"),
    ],
)
def test_an_audit_on_a_reasoning_server_keeps_the_reasoning_out_of_everything_it_uses(
    flavour, fields, settle, researcher_client
):
    with EmulatedServer(flavour) as server:
        endpoint = emulated_endpoint(f"{flavour} model", server, **fields)
        audit = small_audit(f"reasoning {flavour}", tutor=endpoint)
        assert audit_run_inline(audit=audit) == Audit.Status.FINISHED
        sent = server.completions()

    dialogues = list(Dialogue.objects.filter(audit=audit))
    assert len(dialogues) == 2
    # Reasoning that states the answer never reached the reveal check: no dialogue ended "revealed" early.
    assert {(d.status, d.end_reason) for d in dialogues} == {(Dialogue.Status.DONE, "t_max")}
    for dialogue in dialogues:
        turns = [(t.role, t.text) for t in dialogue.turns.order_by("index")]
        assert turns == VISIBLE_DIALOGUE
        assert dialogue.metrics == pytest.approx(conversation_metrics(VISIBLE_DIALOGUE), nan_ok=True)
    assert set(Turn.objects.filter(dialogue__audit=audit, role="tutor").values_list("judge_status", flat=True)) == {
        Turn.JudgeStatus.OK
    }

    # Every prompt the server saw (student, tutor, reveal check, judge) is free of reasoning, and carried the
    # endpoint's extra parameters.
    assert Counter(r.purpose for r in sent).keys() == {"student", "tutor", "check", "judge"}
    for name, value in fields.get("extra_params", {}).items():
        assert {r.body.get(name) for r in sent} == {value}, name
    for request in sent:
        assert no_reasoning(json.dumps(request.messages, ensure_ascii=False)), request.purpose
    # The ledger: requests and replies without it, the reasoning kept apart on every row.
    calls = list(LLMCall.objects.filter(first_audit=audit))
    assert len(calls) == len(sent)
    assert sum(c.completion_tokens for c in calls) == sum(r.usage["completion_tokens"] for r in sent)
    for call in calls:
        assert no_reasoning(json.dumps(call.request, ensure_ascii=False)), call.purpose
        assert no_reasoning(call.response_text or ""), call.purpose
        assert REASONING_MARK in call.reasoning and REASONING_ANSWER in call.reasoning, call.purpose
        assert call.finish_reason == "stop"
        if flavour == "openrouter":  # the server says how many completion tokens were reasoning
            assert call.reasoning_tokens == len(call.reasoning.split()) > 0
            assert call.completion_tokens == call.reasoning_tokens + len(call.response_text.split())

    # The transcript shows the reasoning folded (inside a <details> element), never in the open.
    dialogue = dialogues[0]
    page = researcher_client.get(reverse("audits:dialogue-detail", args=[dialogue.pk]))
    assert page.status_code == 200
    parsed = DetailsText()
    parsed.feed(page.content.decode())
    tutor_call = Turn.objects.filter(dialogue=dialogue, role="tutor").order_by("index").first().llm_call
    folded = " ".join(" ".join(parsed.folded).split())
    assert " ".join(tutor_call.reasoning.split()) in folded
    assert no_reasoning(" ".join(parsed.shown))
    # The API's transcript: turns and replies without reasoning.
    api = researcher_client.get(f"/api/dialogues/{dialogue.pk}/").json()
    assert all(no_reasoning(turn["text"]) for turn in api["turns"])
    assert all(no_reasoning(call["response_text"] or "") for call in api["calls"])


@pytestmark_db
def test_openrouter_gets_the_attribution_headers_and_no_temperature_for_gpt5(settle):
    headers = {"HTTP-Referer": "https://edufair.example.org", "X-Title": "EduFair audit"}
    with EmulatedServer("openrouter") as server:
        endpoint = emulated_endpoint("openrouter gpt-5-mini", server, model="openai/gpt-5-mini", extra_headers=headers)
        audit = small_audit("openrouter", tutor=endpoint)
        assert audit_run_inline(audit=audit) == Audit.Status.FINISHED
        sent = server.completions()

    assert Counter(r.purpose for r in sent).keys() == {"student", "tutor", "check", "judge"}
    for request in sent:
        # The extra headers reach OpenRouter on every request (header names arrive in lower case).
        assert (request.headers["http-referer"], request.headers["x-title"]) == tuple(headers.values())
        # `openai/gpt-5-mini` is recognised as GPT-5: no temperature, the token limit by its GPT-5 name.
        assert "temperature" not in request.body and "max_tokens" not in request.body
    assert not Dialogue.objects.filter(audit=audit).exclude(status=Dialogue.Status.DONE).exists()


def cut_off_audit(flavour: str, budget: int, parser: bool = False, **fields):
    """An audit whose tutor's reasoning runs out of its budget; (audit, tutor, requests sent to it)."""
    with EmulatedServer(flavour, parser=parser) as thinking, EmulatedServer("openai") as plain:
        tutor = emulated_endpoint("cut-off tutor", thinking, max_tokens=budget, **fields)
        other = emulated_endpoint("plain student and judge", plain)
        audit = small_audit("cut off", tutor=tutor, student=other, judge=other)
        audit_run_inline(audit=audit)
        return audit, tutor, thinking.completions()


@pytestmark_db
@pytest.mark.parametrize(
    "flavour, budget, parser, fields",
    [
        pytest.param("truncated", 64, False, {}, id="think-tag-unclosed"),
        pytest.param("truncated", 64, True, {}, id="vllm-parser-content-null"),
        # R1-Distill cut off before its </think>: no tag at all; the endpoint set to "tags" reads it as reasoning.
        pytest.param("r1_distill", 16, False, {"reasoning_format": "tags"}, id="r1-distill-tag-less"),
    ],
)
def test_a_tutor_whose_reasoning_runs_out_of_budget_fails_at_once_and_is_billed(
    flavour, budget, parser, fields, settle
):
    audit, tutor, sent = cut_off_audit(flavour, budget, parser, **fields)

    dialogues = list(Dialogue.objects.filter(audit=audit))
    assert {d.status for d in dialogues} == {Dialogue.Status.FAILED}
    for dialogue in dialogues:
        assert "budget" in dialogue.error and str(budget) in dialogue.error
        assert no_reasoning(dialogue.error)
    # Asked once: a used-up budget comes back the same, so it is not sent again.
    tutor_rows = list(LLMCall.objects.filter(endpoint=tutor))
    assert tutor_rows and len(sent) == len(tutor_rows)
    assert {r.answered for r in sent} == {"length"}
    for row in tutor_rows:
        assert row.status == LLMCall.Status.FAILED and row.attempts == 1
        assert no_reasoning(row.response_text or "") and no_reasoning(row.error)
    # What the server billed is on the rows.
    assert sum(row.completion_tokens for row in tutor_rows) == sum(r.usage["completion_tokens"] for r in sent) > 0
    assert not Turn.objects.filter(dialogue__audit=audit, role="tutor").exists()
    assert all(no_reasoning(text) for text in Turn.objects.filter(dialogue__audit=audit).values_list("text", flat=True))


@pytestmark_db
@pytest.mark.parametrize(
    "flavour, words",
    [
        ("vllm_parser", "reasoning in a separate field"),
        ("vllm_reasoning", "reasoning in a separate field"),
        ("think_tags", "reasoning inside the reply: will be removed"),
        ("r1_distill", "reasoning inside the reply: will be removed"),
    ],
)
def test_the_connection_test_says_where_the_reasoning_comes(flavour, words, researcher_client):
    with EmulatedServer(flavour) as server:
        endpoint = emulated_endpoint(f"{flavour} model", server)
        messages = connection_tests(researcher_client, endpoint)
    for door, message in messages.items():
        assert words in message, door
        assert REASONING_MARK not in message, door


@pytestmark_db
def test_the_connection_test_of_r1_distill_on_auto_recommends_the_tags_setting(researcher_client):
    advice = 'set How reasoning arrives to "tags"'
    with EmulatedServer("r1_distill") as r1, EmulatedServer("think_tags") as tagged:
        auto = connection_tests(researcher_client, emulated_endpoint("r1 on auto", r1))
        tags = connection_tests(researcher_client, emulated_endpoint("r1 on tags", r1, reasoning_format="tags"))
        opened = connection_tests(researcher_client, emulated_endpoint("think tags on auto", tagged))
    for door in auto:
        # A lone </think>: a reply cut off before it would hold no tag, which only "tags" reads as reasoning.
        assert "reasoning inside the reply: will be removed" in auto[door] and advice in auto[door], door
        assert "lone </think>" in auto[door], door
        assert "reasoning inside the reply: will be removed" in tags[door] and advice not in tags[door], door
        # A model that opens <think> itself is cut off inside an open block, which every setting reads.
        assert advice not in opened[door], door
    # The endpoint form says the same beside the setting.
    form = page_text(researcher_client.get(reverse("audits:endpoint-new")))
    assert "set this for DeepSeek-R1-Distill without a reasoning parser" in " ".join(form.split())


@pytestmark_db
def test_the_connection_test_of_a_plain_server_mentions_no_reasoning(researcher_client):
    with EmulatedServer("openai") as server:
        messages = connection_tests(researcher_client, emulated_endpoint("plain model", server))
    for door, message in messages.items():
        assert "reasoning in a separate field" not in message and "reasoning inside the reply" not in message, door
