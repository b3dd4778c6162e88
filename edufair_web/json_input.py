"""Untrusted JSON text parsed with a bounded nesting depth, refused before any value is built.

Pure: no Django. Every importer that parses a whole JSON document (or one JSONL line) in memory goes
through `loads`; the streaming question-bank reader applies the same `MAX_DEPTH` to ijson's events.
Real files nest 2–6 levels; a document of 50,000 nested lists is a few hundred KB and would otherwise
cost gigabytes (or a RecursionError) to build.
"""

import json
import re
import sys
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


def loads(data: bytes | str, max_depth: int = MAX_DEPTH) -> Any:
    """json.loads, after refusing text nested deeper than `max_depth`; errors as JSONInputError."""
    if nesting_depth(data, max_depth) > max_depth:
        raise JSONInputError(f"the JSON is nested too deeply (more than {max_depth} levels)")
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
