"""What a chat-completions request sends besides its messages: temperature, the token limit's name, reasoning effort.

Pure (no Django). Reasoning models have rules of their own: OpenAI's GPT-5 and o-series answer 400 to any
temperature but their default and to `max_tokens` (they take `max_completion_tokens`), and take a
`reasoning_effort`. An endpoint says what to send (`temperature_parameter`, `token_limit_parameter`,
`reasoning_effort`); "auto" follows the model's family. The online provider, the Batch API's input lines, the
ledger's hash and the launch preview all read the parameters here, so what is previewed, hashed and sent is
one thing.
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # calls.py reads the parameters here for the request hash
    from .calls import EndpointConfig

AUTO = "auto"
TEMPERATURE_SEND = "send"
TEMPERATURE_OMIT = "omit"
TEMPERATURE_PARAMETERS = (AUTO, TEMPERATURE_SEND, TEMPERATURE_OMIT)
MAX_TOKENS = "max_tokens"
MAX_COMPLETION_TOKENS = "max_completion_tokens"
TOKEN_LIMIT_PARAMETERS = (AUTO, MAX_TOKENS, MAX_COMPLETION_TOKENS)
REASONING_EFFORTS = ("minimal", "low", "medium", "high")

# OpenAI's reasoning families (o1, o3, o4-mini, GPT-5 and its mini/nano), under a router's prefix too
# ("openai/gpt-5-mini"); GPT-5's chat variant is not a reasoning model and takes a temperature.
_OPENAI_REASONING = re.compile(r"^(?:[\w.-]+/)?(?:o\d+(?:-[\w.-]+)?|gpt-5(?![\w.-]*-chat)[\w.-]*)$", re.IGNORECASE)


@functools.lru_cache(maxsize=256)  # asked for every request: a handful of model names per process
def openai_reasoning_model(model: str) -> bool:
    """True for a model name of OpenAI's reasoning families (GPT-5, o-series)."""
    return bool(_OPENAI_REASONING.match(model.strip()))


def sends_temperature(endpoint: EndpointConfig) -> bool:
    if endpoint.temperature_parameter == TEMPERATURE_OMIT:
        return False
    if endpoint.temperature_parameter == TEMPERATURE_SEND:
        return True
    return not openai_reasoning_model(endpoint.model)


def token_limit_name(endpoint: EndpointConfig) -> str:
    if endpoint.token_limit_parameter in (MAX_TOKENS, MAX_COMPLETION_TOKENS):
        return endpoint.token_limit_parameter
    return MAX_COMPLETION_TOKENS if openai_reasoning_model(endpoint.model) else MAX_TOKENS


def samples(endpoint: EndpointConfig) -> bool:
    """Whether two identical requests may be answered differently: a temperature above 0, or none sent (the
    model's default, 1 for the reasoning families). Such requests carry a sample key in their hash."""
    return not sends_temperature(endpoint) or endpoint.temperature > 0


def sampling_parameters(endpoint: EndpointConfig) -> dict:
    """The parameters sent with every request of the endpoint, by their wire names (its extra parameters aside)."""
    params: dict = {}
    if sends_temperature(endpoint):
        params["temperature"] = endpoint.temperature
    if endpoint.max_tokens:
        params[token_limit_name(endpoint)] = endpoint.max_tokens
    if endpoint.reasoning_effort:
        params["reasoning_effort"] = endpoint.reasoning_effort
    return params


def chat_body(endpoint: EndpointConfig, messages: list[dict], response_format: dict | None = None) -> dict:
    """The JSON body of one chat-completions request, as posted online and written into a Batch API line."""
    body: dict = {"model": endpoint.model, "messages": messages, **sampling_parameters(endpoint)}
    if response_format:
        body["response_format"] = response_format
    # As the SDK's `extra_body`: merged into the top level (an extra parameter may override the ones above).
    body.update(endpoint.extra_params or {})
    return body


def parameters_summary(endpoint: EndpointConfig) -> str:
    """The parameters in words, for the launch preview and the connection test: what each request carries."""
    params = sampling_parameters(endpoint)
    parts = [f"{name} {value:g}" if isinstance(value, float) else f"{name} {value}" for name, value in params.items()]
    if "temperature" not in params:
        parts.insert(0, "no temperature (the model's default)")
    if not endpoint.max_tokens:
        parts.append("no token limit")
    for name, value in (endpoint.extra_params or {}).items():
        parts.append(f"{name} {value}")
    return ", ".join(parts)
