"""What an endpoint may add to its requests besides its URL: the key's header, headers and query parameters.

Pure (no Django). Some servers need more than a base URL and a bearer key: Azure OpenAI's deployments take the
key in an `api-key` header and an `api-version` query parameter; OpenRouter reads `HTTP-Referer` and `X-Title`.
A secret still comes only from the environment variable the endpoint names (audits.llm.outbound_policy), so
the headers and query parameters an endpoint stores are refused when they would carry a key.
"""

from __future__ import annotations

import re

# A header name as HTTP defines a token (RFC 9110), kept short.
_HEADER_NAME = re.compile(r"^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,60}$")
# Header names that carry credentials: the key goes only in the header `api_key_header` names, from its variable.
KEY_HEADERS = frozenset({"authorization", "proxy-authorization", "api-key", "x-api-key", "x-goog-api-key", "cookie"})
# Query parameter names that carry credentials.
_SECRET_NAME = re.compile(r"key|token|secret|password|signature|sig$|auth", re.IGNORECASE)
MAX_ENTRIES = 20
MAX_VALUE = 500


def header_name_refusal(name: str) -> str:
    if not _HEADER_NAME.match(name or ""):
        return f"{name!r} is not a header name (letters, digits and -, at most 60 characters)"
    return ""


def _entries_refusal(values: object, what: str) -> str:
    if not isinstance(values, dict):
        return f"the {what} are one JSON object of names and values"
    if len(values) > MAX_ENTRIES:
        return f"at most {MAX_ENTRIES} {what}"
    for name, value in values.items():
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            return f"the value of {name!r} must be text or a number"
        if len(str(value)) > MAX_VALUE:
            return f"the value of {name!r} is longer than {MAX_VALUE} characters"
    return ""


def headers_refusal(headers: object) -> str:
    """Why these extra headers cannot be stored ("" when they can)."""
    refusal = _entries_refusal(headers, "headers")
    if refusal:
        return refusal
    for name, value in headers.items():
        refusal = header_name_refusal(name)
        if refusal:
            return refusal
        if name.lower() in KEY_HEADERS:
            return (
                f"{name} carries a key: name the key's environment variable in 'API key variable' and the header in "
                "'API key header' instead (a key is never stored)"
            )
        if "\r" in str(value) or "\n" in str(value):
            return f"the value of {name!r} holds a line break"
    return ""


def query_params_refusal(params: object) -> str:
    """Why these query parameters cannot be stored ("" when they can)."""
    refusal = _entries_refusal(params, "query parameters")
    if refusal:
        return refusal
    for name in params:
        if not name or len(name) > 60:
            return "a query parameter's name is 1 to 60 characters"
        if _SECRET_NAME.search(name):
            return (
                f"{name!r} looks like a credential: a key is never stored with the endpoint; name its environment "
                "variable in 'API key variable'"
            )
    return ""
