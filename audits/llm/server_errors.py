"""A model server's error in its own words: the message read from any error body, and a hint for the known cases.

Pure (no Django). Servers of the OpenAI protocol disagree on the shape of an error: OpenAI's object
(`{"error": {"message", "type", "param", "code"}}`), older vLLM and SGLang (`{"object": "error", "message", …}`),
Gemini's compatible endpoint (a JSON *list* of such objects), LM Studio and Ollama (`{"error": "plain text"}`),
Anthropic (`{"type": "error", "error": {"type", "message"}}`), OpenRouter's error inside an HTTP 200 (with
`metadata.provider_name`), a proxy's HTML page. `server_message` reads them all into one line of bounded length;
`status_error_text` is how every door (dialogue, ledger attempt, run page, API, connection test) words a refused
request: the status, the server's message, and what to change when the message is one of the known cases.
"""

from __future__ import annotations

import html
import json
import re
from typing import Any

# An error message is kept whole up to this many characters (an HTML page or a stack trace is cut there).
MESSAGE_MAX = 400

_TAGS = re.compile(r"<(script|style)\b.*?</\1>|<[^>]+>", re.DOTALL | re.IGNORECASE)
_SPACE = re.compile(r"\s+")


def _bounded(text: str, most: int = MESSAGE_MAX) -> str:
    text = _SPACE.sub(" ", text).strip()
    return text if len(text) <= most else f"{text[:most].rstrip()}… ({len(text)} characters)"


def _text_body(text: str) -> str:
    """A body that is not JSON: an HTML page's visible text (title first), or the text itself."""
    if "<" in text and re.search(r"<(html|body|head|title|h1|p|div|!doctype)\b", text, re.IGNORECASE):
        title = re.search(r"<title[^>]*>(.*?)</title>", text, re.DOTALL | re.IGNORECASE)
        visible = html.unescape(_TAGS.sub(" ", text))
        if title:
            heading = html.unescape(_SPACE.sub(" ", title.group(1)).strip())
            rest = _SPACE.sub(" ", visible).strip()
            while heading and rest.startswith(heading):
                rest = rest[len(heading) :].strip()
            return f"{heading}: {rest}" if rest else heading
        return visible
    return text


def _from_object(data: dict) -> str:
    """The message of one error object, with the details a researcher acts on (code, provider, the raw error)."""
    inner = data.get("error", data)
    if isinstance(inner, str):
        return inner
    if isinstance(inner, list):
        return _from_value(inner)
    if not isinstance(inner, dict):
        return json.dumps(data, ensure_ascii=False, default=str)
    message = inner.get("message")
    if not isinstance(message, str) or not message.strip():
        message = inner.get("detail") if isinstance(inner.get("detail"), str) else ""
    if not message and isinstance(inner.get("error"), dict | str):
        return _from_object(inner)
    parts = [message or json.dumps(inner, ensure_ascii=False, default=str)]
    # One label of the error's kind: a named code, status or type before a number.
    labels = [(key, inner.get(key)) for key in ("code", "status", "type")]
    named = [(key, value) for key, value in labels if isinstance(value, str) and value and not value.isdigit()]
    numbered = [(key, value) for key, value in labels[:1] if isinstance(value, int | str) and str(value).isdigit()]
    for key, value in (named or numbered)[:1]:
        if str(value) not in parts[0]:
            parts.append(f"{key} {value}")
    metadata = inner.get("metadata")
    if isinstance(metadata, dict):
        provider = metadata.get("provider_name")
        if isinstance(provider, str) and provider:
            parts.append(f"provider {provider}")
        raw = metadata.get("raw")
        if raw:
            parts.append(f"raw: {raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False, default=str)}")
    for key in ("n_prompt_tokens", "n_ctx"):
        if isinstance(inner.get(key), int) and key not in parts[0]:
            parts.append(f"{key} {inner[key]}")
    return "; ".join(parts)


def _from_value(value: Any) -> str:
    if isinstance(value, dict):
        return _from_object(value)
    if isinstance(value, list):
        messages = [_from_value(item) for item in value[:3]]
        return " | ".join(message for message in messages if message)
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    if isinstance(value, str):
        stripped = value.strip()
        if stripped[:1] in "[{":
            try:
                return _from_value(json.loads(stripped))
            except ValueError:
                pass
        return _text_body(stripped)
    return "" if value is None else str(value)


def server_message(body: Any) -> str:
    """The server's own message from an error body — parsed JSON (dict or list), text or bytes — in one line of
    at most MESSAGE_MAX characters (then cut, with the full length said). Empty for an empty body."""
    return _bounded(_from_value(body))


# (what the message says, what to change) — matched case-insensitively on the server's message.
HINTS: tuple[tuple[re.Pattern, str], ...] = (
    (
        re.compile(r"max_completion_tokens|'max_tokens' is not supported", re.IGNORECASE),
        "set the endpoint's token limit parameter to max_completion_tokens",
    ),
    (
        re.compile(r"temperature", re.IGNORECASE),
        "set the endpoint's temperature parameter to omit (the model takes only its default), or the temperature "
        "it accepts",
    ),
    (
        re.compile(r"reasoning_effort", re.IGNORECASE),
        "clear the endpoint's reasoning effort, or choose one the model accepts",
    ),
    (
        re.compile(
            r"context length|context_length|context size|context window|exceed_context_size|maximum context|too long",
            re.I,
        ),
        "the prompt does not fit the model's context: lower max tokens or T_max, or use a longer-context model",
    ),
    (
        re.compile(r"try pulling it|not found, try pull", re.IGNORECASE),
        "pull the model on the Ollama server (ollama pull <model>) or correct the endpoint's model name",
    ),
    (
        re.compile(r"api-version|api version", re.IGNORECASE),
        'add the api-version to the endpoint\'s query parameters, e.g. {"api-version": "2024-10-21"}',
    ),
    (
        re.compile(r"stream mode|only support stream|stream must be true|streaming is required", re.IGNORECASE),
        "this server answers only streamed requests; EduFair sends non-streamed ones: use another server or model",
    ),
    (
        re.compile(r"model .*(does not exist|not found)|unknown model|no such model", re.IGNORECASE),
        "check the endpoint's model name against the models the server lists",
    ),
)


def error_hint(status: int | None, message: str) -> str:
    """What to change for a known refusal (empty when none is known). A bare 404 "Resource not found" is Azure's
    answer to a missing api-version or deployment."""
    for pattern, hint in HINTS:
        if pattern.search(message):
            return hint
    if status == 404 and "resource not found" in message.lower():
        return (
            "Azure OpenAI: the base URL must end in /openai/deployments/<deployment> and the query parameters "
            'must hold the api-version, e.g. {"api-version": "2024-10-21"}'
        )
    if status == 401:
        return "the server refused the key: check the variable the endpoint names"
    return ""


def status_error_text(status: int | None, body: Any) -> str:
    """How a refused request reads everywhere: "HTTP 400: <the server's message> — <what to change>"."""
    message = server_message(body)
    head = f"HTTP {status}" if status is not None else "error"
    text = f"{head}: {message}" if message else head
    hint = error_hint(status, message)
    return f"{text} — {hint}" if hint else text
