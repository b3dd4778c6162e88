"""Model servers' errors in every shape they come: OpenAI's object, the older vLLM/SGLang object, Gemini's list,
LM Studio's and Ollama's plain string, Anthropic's object (529 when overloaded), a proxy's HTML page, llama.cpp's
context error, and OpenRouter's error inside an HTTP 200. The server's own words reach the run page, the API and
the connection test (an HTML page cut short); the known cases say what to change. Rate limits with and without
Retry-After (Groq, Gemini) are waited out."""

import pytest

from audits.models import Audit, Dialogue, LLMCall
from audits.services.dialogue_batches import audit_run_inline
from audits.tests.server_emulations import (
    EmulatedServer,
    api_progress,
    connection_tests,
    emulated_endpoint,
    run_page,
    small_audit,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def quick_retries(settings):
    settings.AUDIT_RETRY_POLICY = {"max_attempts": 2, "backoff_base": 0.01, "backoff_cap": 0.05}


@pytest.fixture(scope="module")
def plain_server():
    """The student and the judge: a plain server that always answers."""
    with EmulatedServer("openai") as server:
        yield server


# (flavour, planned fault or None, the tutor's model, the server's words, the key word of the hint or "")
SHAPES = [
    pytest.param(
        "groq", "stream_only", "qwq-32b", ["only support stream mode"], "stream", id="openai-object-stream-only"
    ),
    pytest.param(
        "vllm",
        "vllm_context",
        "test-model",
        ["maximum context length is 4096 tokens", "you requested 5000 tokens"],
        "context",
        id="vllm-sglang-object",
    ),
    pytest.param(
        "gemini",
        "gemini_invalid",
        "gemini-2.5-flash",
        ['Unknown name "seed_value"', "INVALID_ARGUMENT"],
        "",
        id="gemini-list",
    ),
    pytest.param(
        "lmstudio",
        "lmstudio_string",
        "test-model",
        ["loaded with context length of only 4096 tokens"],
        "context",
        id="lmstudio-plain-string",
    ),
    pytest.param("anthropic", "anthropic_overloaded", "claude-sonnet-4-5", ["Overloaded"], "", id="anthropic-529"),
    pytest.param(
        "anthropic",
        "anthropic_invalid",
        "claude-sonnet-4-5",
        ["max_tokens: 100000 > 64000, which is the maximum"],
        "",
        id="anthropic-400",
    ),
    pytest.param("lmstudio", "html_proxy", "test-model", ["502 Bad Gateway", "nginx"], "", id="html-proxy-page"),
    pytest.param(
        "ollama",
        None,
        "llama3.1:8b",
        ['model "llama3.1:8b" not found, try pulling it first'],
        "pull",
        id="ollama-not-pulled",
    ),
    pytest.param(
        "llamacpp",
        "llamacpp_context",
        "test-model",
        ["request (5012 tokens) exceeds the available context size (4096 tokens)"],
        "context",
        id="llamacpp-context",
    ),
    pytest.param(
        "openrouter",
        "openrouter_200_error",
        "deepseek/deepseek-r1",
        ["Provider returned error", "DeepInfra", "upstream model overloaded"],
        "",
        id="openrouter-error-in-200",
    ),
]


@pytest.mark.parametrize("flavour, fault, model, words, hint", SHAPES)
def test_the_servers_words_reach_the_run_page_the_api_and_the_connection_test(
    flavour, fault, model, words, hint, quick_retries, plain_server, researcher_client
):
    with EmulatedServer(flavour) as server:
        if fault:
            server.fail(fault)
        tutor = emulated_endpoint(f"{flavour} tutor", server, model=model)
        other = emulated_endpoint("plain student and judge", plain_server)
        audit = small_audit(f"errors {flavour}", tutor=tutor, student=other, judge=other)
        assert audit_run_inline(audit=audit) == Audit.Status.FINISHED
        doors = connection_tests(researcher_client, tutor)
        assert server.count() > 0

    dialogues = list(Dialogue.objects.filter(audit=audit))
    assert {d.status for d in dialogues} == {Dialogue.Status.FAILED}
    rows = LLMCall.objects.filter(endpoint=tutor)
    assert set(rows.values_list("status", flat=True)) == {LLMCall.Status.FAILED}
    places = {
        "dialogue error": dialogues[0].error,
        "ledger row": rows.first().error,
        "run page": run_page(researcher_client, audit),
        "API": api_progress(researcher_client, audit),
        **{f"connection test ({door})": message for door, message in doors.items()},
    }
    for where, text in places.items():
        for word in words:
            assert word in text, (where, word)
        if hint:
            assert hint in text.split(words[-1], 1)[1], (where, hint)  # the hint follows the server's words
    if fault == "html_proxy":
        # A page is quoted by its words, cut short: not its markup, not all of it.
        for where in ("dialogue error", "ledger row", "connection test (service)", "connection test (api)"):
            assert "END-OF-PAGE" not in places[where] and "<center>" not in places[where], where
            assert len(places[where]) < 800, where


def test_an_error_inside_a_200_is_asked_again_and_the_audit_completes(quick_retries):
    with EmulatedServer("openrouter") as server:
        server.fail("openrouter_200_error", times=1, purpose="tutor")
        server.fail("empty_choices", times=1, purpose="judge")
        endpoint = emulated_endpoint("openrouter model", server, model="deepseek/deepseek-r1")
        audit = small_audit("openrouter retried", tutor=endpoint)
        assert audit_run_inline(audit=audit) == Audit.Status.FINISHED
        answered = [r.answered for r in server.completions()]
    assert answered.count("openrouter_200_error") == 1 and answered.count("empty_choices") == 1
    assert not Dialogue.objects.filter(audit=audit).exclude(status=Dialogue.Status.DONE).exists()
    log = [entry["error"] for call in LLMCall.objects.all() for entry in call.attempt_log]
    assert any("Provider returned error" in error and "DeepInfra" in error for error in log), log
    assert any("no choices" in error for error in log), log


@pytest.mark.parametrize(
    "flavour, fault, words, least_wait",
    [
        pytest.param("groq", "groq_rate_limit", "Rate limit reached for model", 1.0, id="groq-retry-after"),
        pytest.param("gemini", "gemini_exhausted", "RESOURCE_EXHAUSTED", 0.0, id="gemini-list-no-retry-after"),
    ],
)
def test_a_rate_limit_is_waited_out_and_recorded_in_the_servers_words(flavour, fault, words, least_wait, settings):
    settings.AUDIT_RETRY_POLICY = {"max_attempts": 3, "backoff_base": 0.01, "backoff_cap": 0.05}
    with EmulatedServer(flavour) as server:
        server.fail(fault, times=1, purpose="tutor")
        endpoint = emulated_endpoint(f"{flavour} model", server)
        audit = small_audit(f"{flavour} rate limited", tutor=endpoint)
        assert audit_run_inline(audit=audit) == Audit.Status.FINISHED
        limited = [r for r in server.completions() if r.status == 429]
    assert len(limited) == 1
    assert not Dialogue.objects.filter(audit=audit).exclude(status=Dialogue.Status.DONE).exists()
    entries = [entry for call in LLMCall.objects.all() for entry in call.attempt_log]
    assert len(entries) == 1 and "429" in entries[0]["error"] and words in entries[0]["error"]
    assert (entries[0].get("wait") or 0) >= least_wait
