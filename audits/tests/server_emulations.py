"""Emulations of real model servers of the OpenAI chat-completions protocol, for the server-behaviour tests.

Each flavour answers with the bodies, headers and status codes its server documents (the facts are listed in
the testing notes, "Real model servers: what they send"). The reply texts themselves — valid tutor, student,
reveal-check and judge replies chosen by the `X-EduFair-Purpose` header — come from `audits.tests.openai_server`;
so does the thread that serves them. What a flavour adds is where a reasoning model puts its reasoning, which
request parameters it refuses, how it words an error, and where it listens.

Flavours (`FLAVOURS`):

- `openai`: a plain server (no reasoning), the reference the others differ from.
- `vllm_parser`: vLLM ≤ 0.10 with `--reasoning-parser`, SGLang, llama.cpp `--jinja`: `message.reasoning_content`
  beside `content`; no `completion_tokens_details` in the usage.
- `vllm_reasoning`: vLLM ≥ 0.11, Ollama ≥ 0.9, OpenRouter: `message.reasoning`; with `report_reasoning_tokens`
  (OpenRouter) the usage says how many of the completion tokens were reasoning.
- `think_tags`: vLLM without a parser, Ollama < 0.9, LM Studio, Groq `reasoning_format=raw`:
  `content = "<think>…</think>\\n\\nreply"`.
- `r1_distill`: DeepSeek-R1-Distill (the opening tag is in the prompt): `content = "…\\n</think>\\n\\nreply"`; a
  `max_tokens` smaller than its reasoning cuts it off there: the first words of the reasoning, no tag at all,
  `finish_reason: "length"`.
- `truncated`: the token limit ends inside the reasoning: `content = "<think>…"` with no closing tag and
  `finish_reason: "length"`; with `parser=True` (vLLM with a parser) `content: null` and everything in
  `reasoning_content`.
- `gpt5`: OpenAI GPT-5 / o-series: 400 for a temperature other than 1 and for `max_tokens`, accepts
  `max_completion_tokens` and `reasoning_effort`, reports `completion_tokens_details.reasoning_tokens` inside
  `completion_tokens`, and answers `content: ""` with `finish_reason: "length"` (billed) when the budget is
  smaller than its reasoning.
- `openrouter`: `message.reasoning` and reasoning tokens; `fail("openrouter_200_error")` answers HTTP 200 with an
  error object and no choices, `fail("empty_choices")` HTTP 200 with `choices: []`; the app attribution headers
  (`HTTP-Referer`, `X-Title`) are kept with each request, as OpenRouter reads them.
- `azure`: listens at `/openai/deployments/{deployment}/chat/completions`, wants `?api-version=` and the key in an
  `api-key` header (404 "Resource not found" without the api-version or for another deployment, 401 without the
  key); `fail("content_filter")` answers `finish_reason: "content_filter"`, `content: null`.
- `gemini`: listens at `/v1beta/openai/chat/completions`; errors as a JSON list (`fail("gemini_invalid")`,
  `fail("gemini_exhausted")`: 429 RESOURCE_EXHAUSTED without Retry-After).
- `anthropic`: ignores `response_format`; judge and reveal-check replies are prose then a ```json fence; a
  `temperature` above 1 is capped at 1 without a word (`SeenRequest.temperature` is what it decoded at);
  `fail("anthropic_overloaded")` is 529.
- `llamacpp`: 503 "Loading model" (with Retry-After) for its first `loading_requests` requests, `GET /health`
  likewise; `fail("llamacpp_context")` is 400 `exceed_context_size_error`.
- `vllm`: a plain vLLM; `fail("vllm_context")` is the older vLLM/SGLang `{"object": "error", …}` context error.
- `ollama`: `message.reasoning`; a model not in `models` is 404 "model \\"x\\" not found, try pulling it first".
- `lmstudio`: `<think>` tags in the content; `fail("lmstudio_string")` is `{"error": "…"}`; `fail("html_proxy")` a
  proxy's HTML error page in front of it.
- `groq`: the request's `reasoning_format` decides where a reasoning model's reasoning goes: `parsed` in
  `message.reasoning`, `raw` inside `<think>` tags in the content (absent: a model that does not reason);
  `fail("groq_rate_limit")` is 429 with `retry-after` and `x-ratelimit-remaining-*`; `fail("stream_only")` the
  400 of a server that answers only streamed requests.

Every request is kept (`requests`: path, query, headers, JSON body, purpose, status, what was answered), so a
test can check what the application sent: that `temperature` was left out, `max_completion_tokens` used, the
Azure `api-key` header and `api-version` query present, no key sent where none is configured.

In a test: `with EmulatedServer("gpt5") as server: ... server.base_url ... server.requests ...`.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import Counter, deque
from dataclasses import dataclass, field

from aiohttp import web

from audits.tests.openai_server import (
    CONTENT,
    REVEAL_PHRASE,
    OpenAITestServer,
    _purpose,
    messages_key,
    student_reply,
    tutor_reply,
)

FLAVOURS = (
    "openai",
    "vllm_parser",
    "vllm_reasoning",
    "think_tags",
    "r1_distill",
    "truncated",
    "gpt5",
    "openrouter",
    "azure",
    "gemini",
    "anthropic",
    "llamacpp",
    "vllm",
    "ollama",
    "lmstudio",
    "groq",
)

# Every reasoning text holds this mark, and states the answer the tutor must not give away: a test looks for
# the mark (and the answer) wherever reasoning must not go.
REASONING_MARK = "private reasoning"
REASONING_ANSWER = f"{REVEAL_PHRASE} 42"

AZURE_API_VERSION = "2024-10-21"
AZURE_DEPLOYMENT = "edufair-gpt4o"
REASONING_EFFORT_TOKENS = {"minimal": 8, "low": 24, "medium": 48, "high": 96}

TEMPERATURE_MESSAGE = (
    "Unsupported value: 'temperature' does not support {value} with this model. Only the default (1) value is "
    "supported."
)
MAX_TOKENS_MESSAGE = (
    "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead."
)
# A proxy's error page (of the kind a CDN in front of a server sends): long enough, in its visible text alone, that a
# message quoting all of it would be useless.
HTML_PAGE = (
    "<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title>"
    "<style>body { font-family: sans-serif; } .x { color: red; }</style></head>\n<body>\n"
    "<center><h1>502 Bad Gateway</h1></center>\n<hr><center>nginx/1.25.3</center>\n"
    + "<p>The web server reported a bad gateway error. Please try again in a few minutes.</p>\n" * 20
    + "<!-- a padding to disable MSIE and Chrome friendly error page -->\n" * 6
    + "<p>END-OF-PAGE</p></body></html>\n"
)


def reasoning_text(purpose: str, number: int) -> str:
    """What a reasoning model thinks before it answers: it states the reference answer."""
    return (
        f"Okay, the {purpose} request number {number}; this is my {REASONING_MARK}. The student wrote 13, which "
        f"is wrong. {REASONING_ANSWER}, because six times seven is forty-two, but I must not say so yet."
    )


def _words(text: str | None) -> int:
    return len((text or "").split())


@dataclass
class SeenRequest:
    """One request the server answered, as it came in, and what the server answered."""

    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]  # names in lower case
    body: dict | None
    purpose: str
    status: int = 0
    answered: str = ""  # "reply", an error's name, or the reply shape ("length", "content_filter"…)
    key: str = ""  # messages_key(purpose, messages): matches a ledger row's request
    usage: dict = field(default_factory=dict)  # the usage the server billed (answers with status 200)
    temperature: float | None = None  # the temperature the model decoded at; None: none sent (its default)

    @property
    def messages(self) -> list[dict]:
        return (self.body or {}).get("messages", [])


def error_response(name: str, *, model: str = "") -> web.Response:
    """The status, headers and body of a named server error, as that server sends it."""
    json_body = None
    headers: dict[str, str] = {}
    status = 400
    if name == "openai_temperature":
        json_body = {
            "error": {
                "message": TEMPERATURE_MESSAGE.format(value=0),
                "type": "invalid_request_error",
                "param": "temperature",
                "code": "unsupported_value",
            }
        }
    elif name == "openai_max_tokens":
        json_body = {
            "error": {
                "message": MAX_TOKENS_MESSAGE,
                "type": "invalid_request_error",
                "param": "max_tokens",
                "code": "unsupported_parameter",
            }
        }
    elif name == "vllm_context":
        json_body = {
            "object": "error",
            "message": "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens "
            "(4000 in the messages, 1000 in the completion). Please reduce the length of the messages or completion.",
            "type": "BadRequestError",
            "param": None,
            "code": 400,
        }
    elif name == "gemini_invalid":
        json_body = [
            {
                "error": {
                    "code": 400,
                    "message": 'Invalid JSON payload received. Unknown name "seed_value": Cannot find field.',
                    "status": "INVALID_ARGUMENT",
                }
            }
        ]
    elif name == "gemini_exhausted":
        status = 429
        json_body = [
            {
                "error": {
                    "code": 429,
                    "message": "Resource has been exhausted (e.g. check quota).",
                    "status": "RESOURCE_EXHAUSTED",
                }
            }
        ]
    elif name == "lmstudio_string":
        json_body = {
            "error": "Trying to keep the first 5012 tokens when context the overflows. However, the model is loaded "
            "with context length of only 4096 tokens, which is not enough. Try to load the model with a larger "
            "context length, or provide a shorter input"
        }
    elif name == "html_proxy":
        return web.Response(status=502, text=HTML_PAGE, content_type="text/html")
    elif name == "anthropic_overloaded":
        status = 529
        json_body = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    elif name == "anthropic_invalid":
        json_body = {
            "type": "error",
            "error": {"type": "invalid_request_error", "message": "max_tokens: 100000 > 64000, which is the maximum"},
        }
    elif name == "ollama_not_pulled":
        status = 404
        json_body = {"error": f'model "{model}" not found, try pulling it first'}
    elif name == "llamacpp_loading":
        status = 503
        headers["Retry-After"] = "1"
        json_body = {"error": {"code": 503, "message": "Loading model", "type": "unavailable_error"}}
    elif name == "llamacpp_context":
        json_body = {
            "error": {
                "code": 400,
                "message": "request (5012 tokens) exceeds the available context size (4096 tokens), try increasing it",
                "type": "exceed_context_size_error",
                "n_prompt_tokens": 5012,
                "n_ctx": 4096,
            }
        }
    elif name == "azure_not_found":
        status = 404
        json_body = {"error": {"code": "404", "message": "Resource not found"}}
    elif name == "azure_unauthorized":
        status = 401
        json_body = {
            "error": {
                "code": "401",
                "message": "Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide "
                "a valid key for an active subscription and use a correct regional API endpoint for your resource.",
            }
        }
    elif name == "groq_rate_limit":
        status = 429
        headers.update(
            {
                "retry-after": "1",
                "x-ratelimit-limit-requests": "30",
                "x-ratelimit-remaining-requests": "0",
                "x-ratelimit-limit-tokens": "6000",
                "x-ratelimit-remaining-tokens": "5210",
                "x-ratelimit-reset-requests": "1s",
            }
        )
        json_body = {
            "error": {
                "message": f"Rate limit reached for model `{model}` in organization `org_01` service tier `on_demand` "
                "on requests per minute (RPM): Limit 30, Used 30, Requested 1. Please try again in 1s.",
                "type": "requests",
                "code": "rate_limit_exceeded",
            }
        }
    elif name == "stream_only":
        json_body = {
            "error": {
                "message": "This model only support stream mode, please enable the stream parameter to access the "
                "model.",
                "type": "invalid_request_error",
                "param": None,
                "code": "invalid_parameter_error",
            }
        }
    elif name == "server_500":
        status = 500
        json_body = {"error": {"message": "The server had an error while processing your request.", "type": "server"}}
    else:
        raise ValueError(f"no such error: {name}")
    return web.json_response(json_body, status=status, headers=headers)


# Faults that are not refusals but odd replies with status 200.
REPLY_FAULTS = ("openrouter_200_error", "empty_choices", "content_filter", "empty_billed")
ERROR_FAULTS = (
    "openai_temperature",
    "openai_max_tokens",
    "vllm_context",
    "gemini_invalid",
    "gemini_exhausted",
    "lmstudio_string",
    "html_proxy",
    "anthropic_overloaded",
    "anthropic_invalid",
    "ollama_not_pulled",
    "llamacpp_loading",
    "llamacpp_context",
    "azure_not_found",
    "azure_unauthorized",
    "groq_rate_limit",
    "stream_only",
    "server_500",
)


@dataclass
class PlannedFault:
    name: str
    purpose: str = "*"
    times: int | None = None  # None: every matching request from now on


@dataclass
class EmulationState:
    flavour: str
    parser: bool = False  # `truncated` only: vLLM with a reasoning parser (content null)
    report_reasoning_tokens: bool = False
    reasoning_tokens: int = 48  # what a gpt5 request reasons before it answers (medium effort)
    loading_requests: int = 0
    models: frozenset[str] = frozenset({"test-model"})
    deployment: str = AZURE_DEPLOYMENT
    faults: deque = field(default_factory=deque)
    requests: list[SeenRequest] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def take_fault(self, purpose: str) -> str | None:
        with self.lock:
            for fault in self.faults:
                if fault.purpose in ("*", purpose):
                    if fault.times is not None:
                        fault.times -= 1
                        if fault.times <= 0:
                            self.faults.remove(fault)
                    return fault.name
        return None


class EmulatedServer(OpenAITestServer):
    """A server of one `flavour` on a thread of its own, on a free port of 127.0.0.1."""

    def __init__(
        self,
        flavour: str = "openai",
        *,
        parser: bool = False,
        report_reasoning_tokens: bool | None = None,
        reasoning_tokens: int = 48,
        loading_requests: int = 0,
        models: tuple[str, ...] = ("test-model",),
        deployment: str = AZURE_DEPLOYMENT,
    ) -> None:
        if flavour not in FLAVOURS:
            raise ValueError(f"unknown flavour {flavour!r}; one of {', '.join(FLAVOURS)}")
        super().__init__()
        if report_reasoning_tokens is None:
            report_reasoning_tokens = flavour in ("gpt5", "openrouter")
        self.emulation = EmulationState(
            flavour=flavour,
            parser=parser,
            report_reasoning_tokens=report_reasoning_tokens,
            reasoning_tokens=reasoning_tokens,
            loading_requests=loading_requests,
            models=frozenset(models),
            deployment=deployment,
        )

    @property
    def flavour(self) -> str:
        return self.emulation.flavour

    @property
    def root_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        """The base URL an endpoint names for this server (the client appends /chat/completions)."""
        if self.flavour == "azure":
            return f"{self.root_url}/openai/deployments/{self.emulation.deployment}"
        if self.flavour == "gemini":
            return f"{self.root_url}/v1beta/openai"
        return f"{self.root_url}/v1"

    def fail(self, name: str, *, times: int | None = None, purpose: str = "*") -> None:
        """Answer the next `times` requests of `purpose` ("*": any; None: all from now on) with the named fault
        (`ERROR_FAULTS`, `REPLY_FAULTS`)."""
        if name not in ERROR_FAULTS + REPLY_FAULTS:
            raise ValueError(f"no such fault: {name}")
        with self.emulation.lock:
            self.emulation.faults.append(PlannedFault(name, purpose, times))

    @property
    def requests(self) -> list[SeenRequest]:
        with self.emulation.lock:
            return list(self.emulation.requests)

    def completions(self) -> list[SeenRequest]:
        """The chat-completion requests (not health checks or model lists)."""
        return [r for r in self.requests if r.path.endswith("/chat/completions")]

    def count(self, purpose: str | None = None) -> int:
        return sum(1 for r in self.completions() if purpose is None or r.purpose == purpose)

    def purposes(self) -> Counter:
        return Counter(r.purpose for r in self.completions())

    def build_app(self) -> web.Application:
        return build_emulation_app(self.emulation)


def _in_field(message: dict) -> bool:
    return "reasoning" in message or "reasoning_content" in message


def flavour_content(flavour: str, purpose: str, messages: list[dict]) -> str:
    """The visible reply a server of `flavour` gives to a request of `purpose` (before any reasoning is added)."""
    if purpose == "student":
        return student_reply(messages)
    content = CONTENT.get(purpose, tutor_reply)(messages)
    if flavour == "anthropic" and purpose in ("judge", "check"):
        # No response_format: the model explains itself, then gives the object in a fence.
        intro = (
            "Here is my assessment of the tutor's turn, read against the rubric."
            if purpose == "judge"
            else "I read the tutor's message carefully before deciding."
        )
        fenced = json.dumps(json.loads(content), indent=2)
        return f"{intro}\n\n```json\n{fenced}\n```\n\nLet me know if you need more."
    return content


def build_emulation_app(state: EmulationState) -> web.Application:
    numbers = iter(range(1, 1_000_000_000))

    def record(request: web.Request, body: dict | None, purpose: str) -> SeenRequest:
        seen = SeenRequest(
            method=request.method,
            path=request.path,
            query=dict(request.query),
            headers={name.lower(): value for name, value in request.headers.items()},
            body=body,
            purpose=purpose,
            key=messages_key(purpose, (body or {}).get("messages", [])) if body else "",
        )
        with state.lock:
            state.requests.append(seen)
        return seen

    def answered(seen: SeenRequest, response: web.Response, what: str) -> web.Response:
        seen.status = response.status
        seen.answered = what
        if response.status == 200 and response.body:
            usage = json.loads(response.body).get("usage")
            seen.usage = usage if isinstance(usage, dict) else {}
        return response

    def loading(seen: SeenRequest) -> web.Response | None:
        if state.flavour != "llamacpp":
            return None
        with state.lock:
            still = state.loading_requests > 0
            if still:
                state.loading_requests -= 1
        return answered(seen, error_response("llamacpp_loading"), "llamacpp_loading") if still else None

    async def health(request: web.Request) -> web.Response:
        seen = record(request, None, "health")
        refusal = loading(seen)
        if refusal is not None:
            return refusal
        return answered(seen, web.json_response({"status": "ok"}), "health")

    async def models(request: web.Request) -> web.Response:
        seen = record(request, None, "models")
        data = [{"id": name, "object": "model", "owned_by": state.flavour} for name in sorted(state.models)]
        return answered(seen, web.json_response({"object": "list", "data": data}), "models")

    async def chat(request: web.Request) -> web.Response:
        raw = await request.read()
        try:
            body = json.loads(raw)
        except ValueError:
            seen = record(request, None, "unreadable")
            return answered(seen, web.json_response({"error": {"message": "bad JSON"}}, status=400), "bad_json")
        purpose = _purpose(request, body)
        seen = record(request, body, purpose)
        sent_temperature = body.get("temperature") if isinstance(body, dict) else None
        if isinstance(sent_temperature, int | float):
            # Anthropic's compatibility layer takes 0 to 1 and caps a larger value at 1, saying nothing.
            seen.temperature = min(sent_temperature, 1.0) if state.flavour == "anthropic" else sent_temperature
        number = next(numbers)
        model = str(body.get("model", ""))

        refusal = gateway(request, seen, body, model)
        if refusal is not None:
            return refusal
        refusal = loading(seen)
        if refusal is not None:
            return refusal
        fault = state.take_fault(purpose)
        if fault in ERROR_FAULTS:
            return answered(seen, error_response(fault, model=model), fault)
        refusal = parameter_refusal(seen, body)
        if refusal is not None:
            return refusal
        return reply(seen, body, purpose, number, fault, model)

    def gateway(request: web.Request, seen: SeenRequest, body: dict, model: str) -> web.Response | None:
        """What the server checks before it reads the request: where it was sent, the key, the model."""
        if state.flavour == "azure":
            deployment = request.match_info.get("deployment", "")
            if deployment != state.deployment or not request.query.get("api-version"):
                return answered(seen, error_response("azure_not_found"), "azure_not_found")
            if not request.headers.get("api-key"):
                return answered(seen, error_response("azure_unauthorized"), "azure_unauthorized")
        if state.flavour == "ollama" and model not in state.models:
            return answered(seen, error_response("ollama_not_pulled", model=model), "ollama_not_pulled")
        return None

    def parameter_refusal(seen: SeenRequest, body: dict) -> web.Response | None:
        """OpenAI's reasoning models refuse a temperature other than 1, `max_tokens` and an unknown effort."""
        if state.flavour != "gpt5":
            return None
        if "temperature" in body and body["temperature"] != 1:
            response = error_response("openai_temperature")
            value = body["temperature"]
            value_text = f"{value:g}" if isinstance(value, int | float) else str(value)
            error = json.loads(response.body)
            error["error"]["message"] = TEMPERATURE_MESSAGE.format(value=value_text)
            return answered(seen, web.json_response(error, status=400), "openai_temperature")
        if "max_tokens" in body:
            return answered(seen, error_response("openai_max_tokens"), "openai_max_tokens")
        effort = body.get("reasoning_effort")
        if effort is not None and effort not in REASONING_EFFORT_TOKENS:
            error = {
                "error": {
                    "message": f"Unsupported value: 'reasoning_effort' does not support '{effort}' with this model. "
                    "Supported values are: 'minimal', 'low', 'medium', and 'high'.",
                    "type": "invalid_request_error",
                    "param": "reasoning_effort",
                    "code": "unsupported_value",
                }
            }
            return answered(seen, web.json_response(error, status=400), "openai_reasoning_effort")
        return None

    def reply(seen: SeenRequest, body: dict, purpose: str, number: int, fault: str | None, model: str) -> web.Response:
        messages = body.get("messages", [])
        prompt_tokens = sum(_words(str(m.get("content", ""))) for m in messages)
        content: str | None = flavour_content(state.flavour, purpose, messages)
        finish = "stop"
        message: dict = {"role": "assistant"}
        reasoning = reasoning_text(purpose, number)
        reasoning_tokens = 0
        completion_tokens = _words(content)
        flavour = state.flavour

        if fault == "openrouter_200_error":
            error = {
                "error": {
                    "code": 502,
                    "message": "Provider returned error",
                    "metadata": {
                        "raw": '{"error":{"message":"upstream model overloaded, try again"}}',
                        "provider_name": "DeepInfra",
                    },
                },
                "user_id": "user_2abc",
            }
            return answered(seen, web.json_response(error), fault)
        if fault == "empty_choices":
            completion = completion_body(body, model, [], prompt_tokens, 0, None)
            return answered(seen, web.json_response(completion), fault)
        if fault == "content_filter":
            choice = {"index": 0, "message": {"role": "assistant", "content": None}, "finish_reason": "content_filter"}
            choice["content_filter_results"] = {"violence": {"filtered": True, "severity": "medium"}}
            completion = completion_body(body, model, [choice], prompt_tokens, 0, None)
            return answered(seen, web.json_response(completion), fault)
        if fault == "empty_billed":
            # A reply with nothing in it, billed all the same (a reasoning model that spent its answer thinking).
            choice = {"index": 0, "message": {"role": "assistant", "content": ""}, "finish_reason": "stop"}
            completion = completion_body(body, model, [choice], prompt_tokens, 37, None)
            return answered(seen, web.json_response(completion), fault)

        if flavour in ("vllm_parser",):
            message["reasoning_content"] = reasoning
            reasoning_tokens = _words(reasoning)
        elif flavour in ("vllm_reasoning", "openrouter", "ollama"):
            message["reasoning"] = reasoning
            reasoning_tokens = _words(reasoning)
        elif flavour in ("think_tags", "lmstudio") or (flavour == "groq" and body.get("reasoning_format") == "raw"):
            content = f"<think>\n{reasoning}\n</think>\n\n{content}"
            reasoning_tokens = _words(reasoning)
        elif flavour == "groq" and body.get("reasoning_format") == "parsed":
            message["reasoning"] = reasoning
            reasoning_tokens = _words(reasoning)
        elif flavour == "r1_distill":
            limit = body.get("max_tokens", body.get("max_completion_tokens"))
            reasoning_tokens = _words(reasoning)
            if isinstance(limit, int) and limit < reasoning_tokens:
                # The budget ends inside the reasoning: no tag at all, the template opened the block in the prompt.
                content, finish, reasoning_tokens = " ".join(reasoning.split()[:limit]), "length", limit
            else:
                content = f"{reasoning}\n</think>\n\n{content}"
        elif flavour == "truncated":
            finish = "length"
            reasoning_tokens = _words(reasoning)
            if state.parser:
                content = None
                message["reasoning_content"] = reasoning
            else:
                content = f"<think>\n{reasoning}"
        elif flavour == "gpt5":
            effort = body.get("reasoning_effort")
            # Medium (the default) reasons `reasoning_tokens`; another effort less or more.
            needed = REASONING_EFFORT_TOKENS[effort] if effort and effort != "medium" else state.reasoning_tokens
            limit = body.get("max_completion_tokens")
            answer_tokens = _words(content)
            if isinstance(limit, int) and limit < needed:
                # The budget went on reasoning: nothing visible, billed in full.
                content, finish, reasoning_tokens = "", "length", limit
            elif isinstance(limit, int) and limit < needed + answer_tokens:
                content = " ".join((content or "").split()[: limit - needed])
                finish, reasoning_tokens = "length", needed
            else:
                reasoning_tokens = needed
            completion_tokens = reasoning_tokens + _words(content)
            message["refusal"] = None
            message["annotations"] = []
        if flavour != "gpt5":
            # Every token the model generated: the reasoning, in a field of its own or inside the content.
            completion_tokens = _words(content) + (reasoning_tokens if _in_field(message) else 0)
        message["content"] = content
        choice = {"index": 0, "message": message, "logprobs": None, "finish_reason": finish}
        if flavour in ("vllm_parser", "vllm_reasoning", "truncated", "vllm"):
            choice["stop_reason"] = None
        details = None
        if state.report_reasoning_tokens:
            details = {"reasoning_tokens": reasoning_tokens, "accepted_prediction_tokens": 0}
        completion = completion_body(body, model, [choice], prompt_tokens, completion_tokens, details)
        return answered(seen, web.json_response(completion), finish if finish != "stop" else "reply")

    def completion_body(body, model, choices, prompt_tokens, completion_tokens, details) -> dict:
        usage: dict = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        }
        if details is not None:
            usage["completion_tokens_details"] = details
        return {
            "id": f"chatcmpl-{int(time.time() * 1000)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model or "test-model",
            "choices": choices,
            "usage": usage,
        }

    app = web.Application()
    app.router.add_get("/health", health)
    app.router.add_get("/v1/models", models)
    app.router.add_post("/openai/deployments/{deployment}/chat/completions", chat)
    app.router.add_post("/{prefix:.*}/chat/completions", chat)
    return app


# --- Audits against an emulated server (the server-behaviour tests share these) ----------------------------


def emulated_endpoint(name: str, server: OpenAITestServer, *, model: str = "test-model", **fields):
    """An OpenAI-compatible endpoint at the server's base URL, with the endpoint settings `fields`."""
    from audits.tests.engine_factories import openai_endpoint

    return openai_endpoint(name, server.base_url, model=model, **fields)


def small_audit(
    name: str, *, tutor, student=None, judge=None, check=None, questions: int = 1, t_max: int = 2, **options
):
    """An audit small enough to run inline in a second: `questions` questions × (control + one first-language
    level), at most `t_max` tutor turns; the student and the judge default to the tutor's endpoint."""
    from audits.services.audit_lifecycle import audit_create
    from audits.tests.engine_factories import explicit_conditions, make_questions

    return audit_create(
        name=name,
        tutors=[tutor],
        student_endpoint=student or tutor,
        judge_endpoint=judge or tutor,
        check_endpoint=check,
        questions=make_questions(questions, prefix=f"{name}-"),
        conditions=explicit_conditions()[:2],
        t_max=t_max,
        **options,
    )


def page_text(response) -> str:
    """A page's HTML with its entities decoded, so a server's quoted words are found as they were sent."""
    import html

    assert response.status_code == 200, response.status_code
    return html.unescape(response.content.decode())


def request_rows(html: str, start: str) -> list[str]:
    """The rows of the table or list that follows `start` in a page, each as its text (tags dropped, entities
    decoded)."""
    import html as entities

    section = html.split(start, 1)[1].split("</table>", 1)[0].split("</ul>", 1)[0]
    rows = re.findall(r"<(?:tr|li)>(.*?)</(?:tr|li)>", section, re.DOTALL)
    return [" ".join(entities.unescape(re.sub(r"<[^>]+>", " ", row)).split()) for row in rows]


def run_page(client, audit) -> str:
    from django.urls import reverse

    return page_text(client.get(reverse("audits:audit-detail", args=[audit.pk])))


def json_strings(value) -> str:
    """Every string in a decoded JSON document, one a line (the words a client reads, unescaped)."""
    if isinstance(value, dict):
        return "\n".join(json_strings(item) for item in value.values())
    if isinstance(value, list):
        return "\n".join(json_strings(item) for item in value)
    return value if isinstance(value, str) else ""


def api_progress(client, audit) -> str:
    """The strings of the API's progress of an audit (its failures and their causes among them)."""
    response = client.get(f"/api/audits/{audit.pk}/progress/")
    assert response.status_code == 200, response.content[:300]
    return json_strings(response.json())


def connection_tests(client, endpoint) -> dict[str, str]:
    """The connection test's message through each door: the service, the API and the endpoints page (htmx)."""
    import html

    from django.urls import reverse

    from audits.services.endpoints import endpoint_connection_test

    _, service = endpoint_connection_test(endpoint=endpoint)
    api = client.post(f"/api/model-endpoints/{endpoint.pk}/test-connection/")
    assert api.status_code == 200, api.content[:300]
    page = client.post(reverse("audits:endpoint-test", args=[endpoint.pk]), HTTP_HX_REQUEST="true")
    assert page.status_code == 200, page.content[:300]
    return {"service": service, "api": api.json()["message"], "page": html.unescape(page.content.decode())}
