"""A model reply read as one JSON object: the whole reply, a ```json fence, or an object after the model's prose.

Pure (no Django). The judge's scores and the dialogue's reveal check both ask a model for a JSON object and
read its reply here; each caller then checks the object's keys and words its own re-ask. A server that ignores
`response_format` (Anthropic's compatibility layer) may answer a sentence, then a fenced object; that object is
read. Prose alone, or an object that is cut short, is still refused.
"""

from __future__ import annotations

import json
import re
from typing import Any

from edufair_web.json_input import MAX_DEPTH, nesting_depth

# The whole reply is one fence (```json … ``` or ``` … ```, any case).
FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL | re.IGNORECASE)
# A fence anywhere in a reply, with prose around it.
FENCE_INSIDE = re.compile(r"```(?:json)?\s*(.*?)\s*```", re.DOTALL | re.IGNORECASE)
# Opening braces tried as the start of an object that ends the reply (bounds the work on a long reply).
MAX_OBJECT_STARTS = 64

EMPTY = "empty"
INVALID = "invalid"
NOT_OBJECT = "not_object"


class ReplyJSONError(ValueError):
    """The reply is not one JSON object; `kind` says why (EMPTY, INVALID or NOT_OBJECT).

    For INVALID, `json_msg` and `json_pos` are the decoder's message and character offset; for NOT_OBJECT,
    `type_name` is the Python type the JSON decoded to. The message says the same in words.
    """

    def __init__(self, kind: str, *, json_msg: str = "", json_pos: int = 0, type_name: str = "") -> None:
        self.kind = kind
        self.json_msg = json_msg
        self.json_pos = json_pos
        self.type_name = type_name
        if kind == EMPTY:
            message = "the reply was empty"
        elif kind == INVALID:
            message = f"the reply is not valid JSON ({json_msg} at character {json_pos})"
        else:
            message = f"the reply is JSON but a {type_name}, not an object"
        super().__init__(message)


def unfenced(text: str) -> str:
    """The reply without surrounding whitespace and, when the whole reply is one code fence, without the fence."""
    body = text.strip()
    fenced = FENCE.match(body)
    return fenced.group(1) if fenced else body


def reply_object(text: str | None) -> dict[str, Any]:
    """The JSON object a reply holds (optionally inside a ```json fence); ReplyJSONError otherwise."""
    if text is None or not text.strip():
        raise ReplyJSONError(EMPTY)
    body = unfenced(text)
    # A reply nested deeper than any answer asked for is refused before it is built (the same bound as every
    # other JSON input): it is an invalid reply, re-asked and recorded like one, never a RecursionError.
    if nesting_depth(body, MAX_DEPTH) > MAX_DEPTH:
        raise ReplyJSONError(INVALID, json_msg=f"nested more than {MAX_DEPTH} levels deep", json_pos=0)
    try:
        data = json.loads(body)
    except json.JSONDecodeError as exc:
        embedded = _object_in_prose(body)
        if embedded is None:
            raise ReplyJSONError(INVALID, json_msg=exc.msg, json_pos=exc.pos) from None
        return embedded
    if not isinstance(data, dict):
        raise ReplyJSONError(NOT_OBJECT, type_name=type(data).__name__)
    return data


def _object_in_prose(body: str) -> dict[str, Any] | None:
    """The object a reply holds beside prose: the first fenced block that is an object, else an object that ends
    the reply (None when there is neither)."""
    for match in FENCE_INSIDE.finditer(body):
        try:
            data = json.loads(match.group(1))
        except json.JSONDecodeError:
            continue
        if isinstance(data, dict):
            return data
    decoder = json.JSONDecoder()
    start = body.find("{")
    for _ in range(MAX_OBJECT_STARTS):
        if start < 0:
            return None
        try:
            data, end = decoder.raw_decode(body, start)
        except json.JSONDecodeError:
            data, end = None, start
        if isinstance(data, dict) and not body[end:].strip():
            return data
        start = body.find("{", start + 1)
    return None
