"""A chat completion read into the reply a caller uses: the visible text, the reasoning apart, the billed tokens.

Pure (no Django, no SDK). The online provider reads the SDK's completion objects, the Batch API path the JSON of
its output lines; both come here, so a reply is read one way. The SDK does not check that a body is a chat
completion (an HTML page with status 200 comes back as a `str`, `{"hello": 1}` as a completion with no
choices), so this does: every malformed reply is a `MalformedReply` (retryable); an answer that holds no
visible reply raises what it stands for — a reasoning budget used up, a tool call, a filtered answer are
permanent (asked again, the same request gets the same answer), an empty one is retried — with the tokens
it was billed.
"""

from __future__ import annotations

from .calls import EndpointConfig, PermanentError, ProviderReply, RetryableError, Usage
from .reasoning import REASONING_AUTO, REASONING_FIELDS, split_reasoning
from .server_errors import server_message


def _field(value: object, name: str) -> object:
    """A field of a completion's part: a dict's key, an SDK object's attribute, or one the SDK kept as an extra."""
    if isinstance(value, dict):
        return value.get(name)
    found = getattr(value, name, None)
    if found is None and isinstance(getattr(value, "model_extra", None), dict):
        found = value.model_extra.get(name)
    return found


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


class MalformedReply(RetryableError):
    """The server answered, but not with a usable chat completion (worth asking again)."""


def _usage(completion: object) -> Usage:
    usage = _field(completion, "usage")
    return Usage(
        _count(_field(usage, "prompt_tokens")),
        _count(_field(usage, "completion_tokens")),
        _count(_field(_field(usage, "completion_tokens_details"), "reasoning_tokens")),
    )


def field_reasoning(message: object) -> str:
    """The reasoning a server sent in a field of its own (the first of REASONING_FIELDS that holds text)."""
    for name in REASONING_FIELDS:
        value = _field(message, name)
        if isinstance(value, str) and value.strip():
            return value
    return ""


def _no_text_error(finish_reason: str, message: object, usage: Usage, endpoint: EndpointConfig | None):
    """Why an answer holds no visible reply, as the error the client acts on: a used-up budget, a tool call or a
    filtered answer would come back the same if asked again (permanent); an empty answer may not (retried)."""
    if finish_reason == "length":
        budget = (endpoint.max_tokens if endpoint else None) or usage.completion_tokens
        spent = f"{usage.reasoning_tokens} of them reasoning, " if usage.reasoning_tokens else ""
        return PermanentError(
            f'the reasoning used the whole budget of {budget} tokens ({spent}finish_reason "length", no visible '
            "reply): raise the endpoint's max tokens, or lower its reasoning effort",
            usage=usage,
        )
    if _field(message, "tool_calls") or _field(message, "function_call"):
        return PermanentError(
            "the model answered with a tool call only, no text (finish_reason "
            f"{finish_reason or 'none'}): the endpoint's extra parameters must not offer tools",
            usage=usage,
        )
    if finish_reason == "content_filter":
        return PermanentError(
            'the provider\'s content filter withheld the reply (finish_reason "content_filter")', usage=usage
        )
    refusal = _field(message, "refusal")
    if isinstance(refusal, str) and refusal.strip():
        return PermanentError(f"the model refused: {server_message(refusal)}", usage=usage)
    return MalformedReply("empty content", usage=usage)


def _part_text(part: object) -> str:
    """The text of a content part, or of a thinking part's nested parts."""
    if isinstance(part, str):
        return part
    if isinstance(part, list):
        return "".join(_part_text(item) for item in part)
    if isinstance(part, dict):
        for name in ("text", "thinking", "reasoning"):
            if name in part:
                return _part_text(part[name])
    return ""


def _content_text(content: object, usage: Usage) -> tuple[str | None, str]:
    """(text, reasoning) of a message's content: text as most servers send it, or a list of parts (Mistral's
    reasoning models send `thinking` parts beside `text` ones)."""
    if content is None or isinstance(content, str):
        return content, ""
    if isinstance(content, list) and all(isinstance(part, dict) for part in content):
        text = [_part_text(part) for part in content if part.get("type") == "text"]
        thinking = [_part_text(part) for part in content if part.get("type") in ("thinking", "reasoning")]
        if len(text) + len(thinking) == len(content):
            return "".join(text), "\n\n".join(piece.strip() for piece in thinking if piece.strip())
    raise MalformedReply(f"the message content is a {type(content).__name__}, not text", usage=usage)


def reply_from_completion(completion: object, endpoint: EndpointConfig | None = None) -> ProviderReply:
    """The visible text, reasoning, token counts and reported model of a chat completion; MalformedReply saying
    what is wrong with anything else, or the error an answer without a visible reply stands for."""
    if isinstance(completion, str | bytes):
        start = completion[:60].decode("utf-8", "replace") if isinstance(completion, bytes) else completion[:60]
        raise MalformedReply(f"the body is not JSON but text: {start.strip()!r}")
    error = _field(completion, "error")
    if error:
        # OpenRouter, once the request reached a provider: HTTP 200 with an error object and no choices.
        raise RetryableError(f"error inside an HTTP 200 answer: {server_message({'error': error})}")
    choices = _field(completion, "choices")
    if not isinstance(choices, list):
        raise MalformedReply(f"the body is not a chat completion ({type(completion).__name__} without choices)")
    usage = _usage(completion)
    if not choices:
        raise MalformedReply("the response had no choices", usage=usage)
    message = _field(choices[0], "message")
    if message is None:
        raise MalformedReply("the first choice has no message", usage=usage)
    content, part_reasoning = _content_text(_field(message, "content"), usage)
    finish_reason = _field(choices[0], "finish_reason")
    finish_reason = finish_reason if isinstance(finish_reason, str) else ""
    reasoning = "\n\n".join(piece for piece in (field_reasoning(message), part_reasoning) if piece)
    mode = endpoint.reasoning_format if endpoint else REASONING_AUTO
    split = split_reasoning(content, reasoning, mode, cut_off=finish_reason == "length")
    if not split.visible:
        error = _no_text_error(finish_reason, message, usage, endpoint)
        # The ledger keeps what the model did say (its reasoning) and why it stopped, beside the error.
        error.reasoning, error.finish_reason = split.reasoning, finish_reason
        raise error
    model = _field(completion, "model")
    return ProviderReply(
        text=split.visible,
        prompt_tokens=usage.prompt_tokens,
        completion_tokens=usage.completion_tokens,
        model=model[:200] if isinstance(model, str) else "",
        reasoning=split.reasoning,
        reasoning_tokens=usage.reasoning_tokens,
        finish_reason=finish_reason,
        reasoning_source=split.source,
        reasoning_opened_in_prompt=split.opened_in_prompt,
    )
