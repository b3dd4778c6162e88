"""One record of an imported file (a line, a row, a list element) bounded in bytes, refused without holding it."""

import re
from collections.abc import Iterator
from typing import BinaryIO

SETTING = "IMPORT_RECORD_MAX_BYTES"  # where the limit is set (edufair_web.upload_limits.record_limit reads it)
SKIP_CHUNK = 1 << 20  # an over-long line is counted to its end in pieces of this size, never held whole
UTF8_BOM = b"\xef\xbb\xbf"


class RecordTooLarge(ValueError):
    """`kind` `number` (\"line 3\", \"record 2\") is `size` bytes (None: more than the limit, not counted)."""

    def __init__(self, kind: str, number: int, size: int | None, limit: int):
        self.kind, self.number, self.size, self.limit = kind, number, size, limit
        told = f"{size:,} bytes" if size is not None else f"more than {limit:,} bytes"
        self.detail = f"{told}; a record may be at most {limit:,} bytes ({SETTING})"
        super().__init__(f"{kind} {number} is {self.detail}")


def _terminator(raw: bytes) -> int:
    if raw.endswith(b"\r\n"):
        return 2
    return 1 if raw.endswith(b"\n") else 0


def bounded_lines(handle: BinaryIO, limit: int) -> Iterator[bytes]:
    """The lines of a binary file (with their line ending), each read with readline's cap: a line of more than
    `limit` bytes (its ending and a leading byte order mark not counted) raises RecordTooLarge with its exact size,
    counted to its end in SKIP_CHUNK pieces."""
    cap = limit + len(UTF8_BOM) + 3  # room for a BOM, "\r\n" and one byte more than a line may hold
    number = 0
    while raw := handle.readline(cap):
        number += 1
        size = len(raw) - _terminator(raw) - (len(UTF8_BOM) if number == 1 and raw.startswith(UTF8_BOM) else 0)
        if size > limit:
            while not raw.endswith(b"\n") and (raw := handle.readline(SKIP_CHUNK)):
                size += len(raw) - _terminator(raw)
            raise RecordTooLarge("line", number, size, limit)
        yield raw


_LINE_BREAK = re.compile(r"\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]")  # the breaks of str.splitlines


def text_lines_check(text: str, limit: int) -> None:
    """Raise RecordTooLarge for the first line of `text` (split as str.splitlines splits) over `limit` bytes of UTF-8;
    only a line of more than limit/4 characters is measured."""
    if len(text) <= limit // 4:
        return
    start, number = 0, 1
    for match in _LINE_BREAK.finditer(text):
        _line_check(text, start, match.start(), number, limit)
        start, number = match.end(), number + 1
    _line_check(text, start, len(text), number, limit)


def _line_check(text: str, start: int, end: int, number: int, limit: int) -> None:
    if end - start > limit // 4:
        size = len(text[start:end].encode("utf-8", "surrogatepass"))
        if size > limit:
            raise RecordTooLarge("line", number, size, limit)


# A JSON string (with escapes), a bracket or a comma: strings are skipped whole, so what they hold does not count.
_TOKEN = re.compile(rb'"(?:[^"\\]++|\\.)*+"|[\[\]{},]', re.DOTALL)


def json_list_check(data: bytes | str, limit: int, kind: str = "record") -> None:
    """Raise RecordTooLarge for the first element (named `kind`) of a top-level JSON list over `limit` bytes (the
    separating white space counted with it); anything else (an object, invalid JSON) is left to the parser. Scans the
    text, builds nothing."""
    if len(data) <= limit // 4:
        return
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    depth = number = 0
    start = None
    for match in _TOKEN.finditer(raw):
        token = match.group() if match.end() - match.start() == 1 else b'"'
        if token in (b"[", b"{"):
            depth += 1
            if depth == 1:
                if token == b"{":
                    return  # one object, not a list
                start, number = match.end(), 1
        elif token in (b"]", b"}"):
            depth -= 1
            if depth == 0:
                _element_check(start, match.start(), number, limit, kind)
                return
        elif token == b"," and depth == 1:
            _element_check(start, match.start(), number, limit, kind)
            start, number = match.end(), number + 1


def _element_check(start: int | None, end: int, number: int, limit: int, kind: str) -> None:
    if start is not None and end - start > limit:
        raise RecordTooLarge(kind, number, end - start, limit)
