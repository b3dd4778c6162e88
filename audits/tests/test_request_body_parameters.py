"""What a request sends for each kind of model (audits.llm.request_body), and the endpoint's headers and query.

The rules are OpenAI's for its reasoning models (GPT-5, o-series: no temperature but the default, and
`max_completion_tokens` instead of `max_tokens`), as its API reference and error bodies state them.
"""

from __future__ import annotations

import pytest

from audits.llm.calls import CallRequest, EndpointConfig
from audits.llm.dialogue import requests_preview
from audits.llm.endpoint_shapes import headers_refusal, query_params_refusal
from audits.llm.request_body import chat_body, openai_reasoning_model, parameters_summary, samples


def endpoint(**changes) -> EndpointConfig:
    return EndpointConfig(key="e", provider="openai", model=changes.pop("model", "llama-3.1-8b"), **changes)


@pytest.mark.parametrize(
    ("model", "reasoning"),
    [
        ("gpt-5", True),
        ("gpt-5-mini", True),
        ("gpt-5-nano-2025-08-07", True),
        ("openai/gpt-5-mini", True),
        ("o1", True),
        ("o3-mini", True),
        ("o4-mini-2025-04-16", True),
        ("gpt-5-chat-latest", False),
        ("gpt-4o", False),
        ("gpt-4.1-mini", False),
        ("deepseek-r1-distill-llama-70b", False),
        ("qwen3:8b", False),
    ],
)
def test_openai_reasoning_families(model, reasoning):
    assert openai_reasoning_model(model) is reasoning


def test_a_default_endpoint_sends_what_it_always_sent():
    body = chat_body(endpoint(max_tokens=200, extra_params={"top_p": 0.9}), [{"role": "user", "content": "hi"}])
    assert body == {
        "model": "llama-3.1-8b",
        "messages": [{"role": "user", "content": "hi"}],
        "temperature": 0.0,
        "max_tokens": 200,
        "top_p": 0.9,
    }


def test_a_gpt5_endpoint_on_auto_omits_temperature_and_names_max_completion_tokens():
    gpt5 = endpoint(model="gpt-5-mini", max_tokens=2000, reasoning_effort="low")
    body = chat_body(gpt5, [])
    assert "temperature" not in body and "max_tokens" not in body
    assert body["max_completion_tokens"] == 2000 and body["reasoning_effort"] == "low"
    assert samples(gpt5)  # at its default temperature the model samples: repeated requests carry a sample key
    assert parameters_summary(gpt5).startswith("no temperature (the model's default)")


def test_settings_override_the_family():
    forced = endpoint(
        model="gpt-5-mini", temperature_parameter="send", token_limit_parameter="max_tokens", max_tokens=9
    )
    assert {k: v for k, v in chat_body(forced, []).items() if k != "messages"} == {
        "model": "gpt-5-mini",
        "temperature": 0.0,
        "max_tokens": 9,
    }
    omitted = endpoint(temperature_parameter="omit", token_limit_parameter="max_completion_tokens", max_tokens=9)
    assert "temperature" not in chat_body(omitted, []) and chat_body(omitted, [])["max_completion_tokens"] == 9


def test_the_hash_of_a_default_endpoint_is_unchanged_and_a_reasoning_setting_changes_it():
    messages = [{"role": "user", "content": "hi"}]
    default = CallRequest(endpoint=endpoint(), purpose="tutor", messages=messages)
    assert default.params() == {"temperature": 0.0}
    # The hashes the release before reasoning settings existed (59b511e) computed for these requests: ledgers written
    # then are still found.
    assert default.request_hash() == "6ac72a9cd87aed4a91fa110db28d922e09810afce85e1bda6e1c3a88ef182d90"
    full = CallRequest(
        endpoint=endpoint(max_tokens=200, extra_params={"top_p": 0.9}),
        purpose="tutor",
        messages=messages,
        response_format={"type": "json_object"},
    )
    assert full.request_hash() == "516b93f77bdb2a5c9553a0cb2c947363c952b8451bfbde54de8e6e67d9b88c87"
    tagged = CallRequest(endpoint=endpoint(reasoning_format="none"), purpose="tutor", messages=messages)
    assert tagged.request_hash() != default.request_hash()


def test_the_student_keeps_temperature_0_only_where_the_model_takes_one():
    judge = endpoint(model="gpt-oss-120b")
    rows = requests_preview(tutors=[endpoint()], student=endpoint(temperature=0.7), judge=judge, check=None)
    assert [row["role"] for row in rows] == ["tutor", "student", "judge", "check"]
    assert rows[1]["parameters"] == "temperature 0, no token limit" and "fixed student" in rows[1]["note"]
    assert rows[1]["temperature"] == 0 and rows[0]["temperature"] == 0
    rows = requests_preview(tutors=[endpoint()], student=endpoint(model="gpt-5-mini"), judge=judge, check=None)
    assert "no temperature" in rows[1]["parameters"] and "not at 0" in rows[1]["note"]
    assert rows[1]["temperature"] is None


@pytest.mark.parametrize(
    ("headers", "refused"),
    [
        ({"HTTP-Referer": "https://example.org", "X-Title": "EduFair"}, ""),
        ({"Authorization": "Bearer sk-1"}, "carries a key"),
        ({"api-key": "abc"}, "carries a key"),
        ({"X-Ok": "a\r\nInjected: 1"}, "line break"),
        ({"bad header": "x"}, "not a header name"),
        (["x"], "one JSON object"),
    ],
)
def test_extra_headers_never_hold_a_key(headers, refused):
    refusal = headers_refusal(headers)
    assert (refused in refusal) if refused else refusal == ""


def test_query_parameters_hold_no_credential():
    assert query_params_refusal({"api-version": "2024-10-21"}) == ""
    assert "credential" in query_params_refusal({"key": "AIza…"})
    assert "credential" in query_params_refusal({"access_token": "x"})
