"""Untrusted JSON text parsed with a bounded nesting depth, refused before any value is built.

Pure: no Django. Every importer that parses a whole JSON document (or one JSONL line) in memory goes
through `loads`; the streaming question-bank reader applies the same `MAX_DEPTH` to ijson's events.
Real files nest 2–6 levels; a document of 50,000 nested lists is a few hundred KB and would otherwise
cost gigabytes (or a RecursionError) to build. `loads_array` is `loads` for a document that is one list
read element by element (a Label Studio export): the decoded list takes several times the text's size.
"""

import json
import re
import sys
from array import array
from collections.abc import Iterator, Sequence
from typing import Any

MAX_DEPTH = 64

# A JSON string (with escapes) or one bracket: strings are skipped so brackets inside them do not count. The
# quantifiers are possessive: the same tokens, but with backtracking the engine kept a frame per character of a string
# (about 115 bytes each: one 5 MB string, such as a Label Studio export sent as the API's `content`, took 570 MB).
_TOKEN = re.compile(rb'"(?:[^"\\]++|\\.)*+"|[\[\]{}]', re.DOTALL)


class JSONInputError(ValueError):
    """The text is not JSON, or is nested deeper than MAX_DEPTH; the message says which, in words."""


def nesting_depth(data: bytes | str, limit: int = MAX_DEPTH) -> int:
    """Deepest bracket nesting of the text, stopping as soon as it passes `limit` (returns limit + 1)."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    if b"[" not in raw and b"{" not in raw:
        return 0
    depth = deepest = 0
    for match in _TOKEN.finditer(raw):
        token = match.group()
        if token in (b"[", b"{"):
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > limit:
                    return deepest
        elif token in (b"]", b"}"):
            depth -= 1
    return deepest


def _refuse_deep(data: bytes | str, max_depth: int) -> None:
    if nesting_depth(data, max_depth) > max_depth:
        raise JSONInputError(f"the JSON is nested too deeply (more than {max_depth} levels)")


def _parse(data: bytes | str) -> Any:
    try:
        return json.loads(data)
    except json.JSONDecodeError as exc:
        raise JSONInputError(f"not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})") from None
    except UnicodeDecodeError as exc:
        raise JSONInputError(f"the JSON is not UTF-8 text (byte {exc.start})") from None
    except ValueError:  # a number of more digits than int() converts (a 500 before)
        raise JSONInputError(f"not valid JSON (a number has more than {sys.get_int_max_str_digits()} digits)") from None
    except RecursionError:  # only reachable with max_depth above the interpreter's own limit
        raise JSONInputError("the JSON is nested too deeply") from None


def loads(data: bytes | str, max_depth: int = MAX_DEPTH) -> Any:
    """json.loads, after refusing text nested deeper than `max_depth`; errors as JSONInputError."""
    _refuse_deep(data, max_depth)
    return _parse(data)


class JSONArray(Sequence):
    """The elements of a JSON list, each decoded from the text when it is read, and again at every read: a pass over
    the list holds one element at a time. The text is the caller's own (kept, not copied); what is added is two offsets
    per element."""

    def __init__(self, text: bytes | str, spans: array):
        self._text = text
        self._spans = spans  # start and end of each element in `text`, in its own units (bytes or characters)

    def __len__(self) -> int:
        return len(self._spans) // 2

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError("JSONArray index out of range")
        return self._element(index)

    def __iter__(self) -> Iterator:
        for index in range(len(self)):
            yield self._element(index)

    def _element(self, index: int) -> Any:
        text = self._text[self._spans[2 * index] : self._spans[2 * index + 1]]
        if not isinstance(text, str):
            text = text.decode("utf-8", "surrogatepass")  # as json.loads decodes UTF-8
        return _DECODER.decode(text)


_DECODER = json.JSONDecoder()
_SPACE = json.decoder.WHITESPACE.match  # the whitespace json.loads skips


def _element_spans(text: str) -> array | None:
    """Where each element of the one list `text` holds starts and ends, or None when `text` is not one list. Each
    element is decoded (and dropped) on the way: an invalid one raises json.loads' own error."""
    at = _SPACE(text, 0).end()
    if not text.startswith("[", at):
        return None
    spans = array("Q")
    at = _SPACE(text, at + 1).end()
    if text.startswith("]", at):
        end = at + 1
    else:
        while True:
            _, end = _DECODER.raw_decode(text, at)
            spans.extend((at, end))
            at = _SPACE(text, end).end()
            if text.startswith(",", at):
                at = _SPACE(text, at + 1).end()
            elif text.startswith("]", at):
                end = at + 1
                break
            else:
                return None
    return spans if _SPACE(text, end).end() == len(text) else None


def _array(data: bytes | str) -> JSONArray | None:
    if isinstance(data, str):
        if data.startswith("\ufeff"):  # json.loads refuses a str with a byte order mark
            return None
        spans = _element_spans(data)
        return None if spans is None else JSONArray(data, spans)
    encoding = json.detect_encoding(data)
    if encoding not in ("utf-8", "utf-8-sig"):
        return None
    skipped = 3 if encoding == "utf-8-sig" else 0
    text = str(memoryview(data)[skipped:], "utf-8", "surrogatepass")
    spans = _element_spans(text)
    if spans is None:
        return None
    if text.isascii():  # a character is a byte
        offsets = array("Q", (skipped + offset for offset in spans))
    else:
        offsets, chars, size = array("Q"), 0, skipped
        for offset in spans:
            size += len(text[chars:offset].encode("utf-8", "surrogatepass"))
            chars = offset
            offsets.append(size)
    return JSONArray(data, offsets)


def loads_array(data: bytes | str, max_depth: int = MAX_DEPTH) -> Any:
    """`loads` — the same checks, values and errors — except that a document that is one list comes back as a
    JSONArray of its elements instead of a list. Anything else (another value, invalid JSON) goes through `loads`
    itself, so an error is the one `loads` gives."""
    _refuse_deep(data, max_depth)
    try:
        elements = _array(data)
    except (ValueError, RecursionError):  # json.JSONDecodeError and UnicodeDecodeError are ValueErrors
        elements = None
    return elements if elements is not None else _parse(data)


class DepthBoundedDecoder(json.JSONDecoder):
    """The same rule for the frameworks' JSON fields (DRF's and Django's take `decoder=`): text nested deeper than
    MAX_DEPTH, or holding a number of more digits than int() converts, is a JSONDecodeError, which both answer as an
    invalid value (400), never a RecursionError or a bare ValueError (500: Django's form field catches only the
    former)."""

    def decode(self, s, *args, **kwargs):
        if nesting_depth(s, MAX_DEPTH) > MAX_DEPTH:
            raise json.JSONDecodeError(f"nested too deeply (more than {MAX_DEPTH} levels)", s, 0)
        try:
            return super().decode(s, *args, **kwargs)
        except json.JSONDecodeError:
            raise
        except ValueError:
            raise json.JSONDecodeError(f"a number has more than {sys.get_int_max_str_digits()} digits", s, 0) from None
