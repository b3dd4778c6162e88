"""Every error body is read into the server's own words, with a hint for the known cases (audits.llm.server_errors).

The bodies are those the servers document: OpenAI's error object (API reference, "Error codes"), older vLLM and
SGLang (`{"object": "error", …}`), Gemini's OpenAI-compatible endpoint (a JSON list), LM Studio and Ollama
(`{"error": "text"}`), Anthropic (`{"type": "error", "error": {…}}`), llama.cpp's context error, OpenRouter's
error inside an HTTP 200, and a proxy's HTML page.
"""

from __future__ import annotations

import json

import pytest

from audits.llm.server_errors import MESSAGE_MAX, server_message, status_error_text

GPT5_TEMPERATURE = {
    "error": {
        "message": "Unsupported value: 'temperature' does not support 0 with this model. Only the default (1) value "
        "is supported.",
        "type": "invalid_request_error",
        "param": "temperature",
        "code": "unsupported_value",
    }
}
GPT5_MAX_TOKENS = {
    "error": {
        "message": "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' "
        "instead.",
        "type": "invalid_request_error",
        "param": "max_tokens",
        "code": "unsupported_parameter",
    }
}


@pytest.mark.parametrize(
    ("status", "body", "words", "hint"),
    [
        (400, GPT5_TEMPERATURE, "'temperature' does not support 0", "temperature parameter to omit"),
        (400, GPT5_MAX_TOKENS, "Use 'max_completion_tokens' instead", "token limit parameter"),
        (
            400,
            {"object": "error", "message": "This model's maximum context length is 4096 tokens.", "code": 400},
            "maximum context length is 4096",
            "context",
        ),
        (
            400,
            [{"error": {"code": 400, "message": "Invalid value at 'temperature'", "status": "INVALID_ARGUMENT"}}],
            "Invalid value at 'temperature'; status INVALID_ARGUMENT",
            "temperature",
        ),
        (404, {"error": 'model "qwen3:8b" not found, try pulling it first'}, "try pulling it first", "ollama pull"),
        (400, {"error": "Model is not loaded"}, "Model is not loaded", ""),
        (529, {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}, "Overloaded", ""),
        (
            400,
            {
                "error": {
                    "code": 400,
                    "message": "request exceeds the available context size",
                    "type": "exceed_context_size_error",
                    "n_prompt_tokens": 5000,
                    "n_ctx": 4096,
                }
            },
            "n_ctx 4096",
            "context",
        ),
        (404, {"error": {"code": "404", "message": "Resource not found"}}, "Resource not found", "api-version"),
        (400, {"error": {"message": "Only support stream mode"}}, "stream mode", "streamed"),
        (502, "<html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1></body></html>", "", ""),
    ],
)
def test_each_body_reads_in_the_servers_words(status, body, words, hint):
    raw = body if isinstance(body, str) else json.dumps(body)
    text = status_error_text(status, raw)
    assert text.startswith(f"HTTP {status}: ")
    assert words in text
    if hint:
        assert hint in text.split(" — ", 1)[1]
    else:
        assert " — " not in text


def test_an_html_page_reads_as_its_visible_text_cut_short():
    page = "<html><head><title>Gateway Timeout</title><style>p{}</style></head><body>" + "<p>x</p>" * 2000 + "</body>"
    message = server_message(page)
    assert message.startswith("Gateway Timeout: x x") and "<" not in message and "p{}" not in message
    assert len(message) < MESSAGE_MAX + 40 and message.endswith("characters)")


def test_an_error_inside_a_200_names_its_provider():
    body = {"error": {"code": 502, "message": "Provider returned error", "metadata": {"provider_name": "Together"}}}
    assert server_message(body) == "Provider returned error; code 502; provider Together"
