"""Streaming readers for import files: UTF-8 check, JSON list/object (ijson), JSONL, CSV.

Pure: no Django. A reader takes an `opener` (a function returning a fresh binary file object, so a file can
be read twice: once to validate, once to write) and yields `(location, record)` without ever holding the
whole file, or a record over `record_limit` bytes, in memory. Every problem becomes an `ImportFileError` naming the
record, line or row.
"""

import codecs
import csv
import hashlib
import io
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import BinaryIO

import ijson

from edufair_web.json_input import MAX_DEPTH, JSONInputError, loads
from edufair_web.record_bounds import RecordTooLarge, bounded_lines

from .records import ImportFileError, ProgressCallback, no_progress

Opener = Callable[[], BinaryIO]

CHUNK_BYTES = 1 << 20
UTF8_BOM = codecs.BOM_UTF8
# Deepest nesting a JSON import may have: json_input.MAX_DEPTH, the rule of every importer (real question files
# have 2–5 levels). It is checked on the parser's events, before any value is built: ijson.items alone builds a
# 50,000-deep list of a 100 KB file with 6 GB of memory before the importer could refuse it.


@dataclass(frozen=True)
class FileFacts:
    size: int
    sha256: str
    first_char: str  # first non-whitespace character, "" for an empty file


def file_facts(opener: Opener, progress: ProgressCallback = no_progress) -> FileFacts:
    """One pass over the bytes: size, SHA-256, and proof that the text is UTF-8 and not empty."""
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    digest = hashlib.sha256()
    size = 0
    newlines = 0
    first_char = ""
    with opener() as handle:
        total = _size_of(handle)
        while chunk := handle.read(CHUNK_BYTES):
            digest.update(chunk)
            try:
                text = decoder.decode(chunk)
            except UnicodeDecodeError as error:
                offset = size + error.start
                line = newlines + chunk[: error.start].count(b"\n") + 1
                raise ImportFileError(
                    f"the file is not UTF-8 text (byte {offset}, value 0x{chunk[error.start]:02x}); "
                    "save it as UTF-8 and upload it again",
                    location=f"line {line}",
                ) from None
            if not first_char:
                first_char = text.lstrip("\ufeff \t\r\n")[:1]
            newlines += chunk.count(b"\n")
            size += len(chunk)
            progress("checking", size, total)
        try:
            decoder.decode(b"", final=True)
        except UnicodeDecodeError:
            raise ImportFileError(
                "the file is not UTF-8 text (it ends inside a multi-byte character)", location=f"line {newlines + 1}"
            ) from None
    if not first_char:
        raise ImportFileError("the file is empty")
    return FileFacts(size=size, sha256=digest.hexdigest(), first_char=first_char)


def _size_of(handle: BinaryIO) -> int:
    try:
        position = handle.tell()
        handle.seek(0, io.SEEK_END)
        size = handle.tell()
        handle.seek(position)
        return size
    except (OSError, AttributeError):
        return 0


class _CountingReader:
    """Wraps a binary file so the bytes read so far can be reported as progress; skips a UTF-8 BOM. Refuses to read
    on (raises _TooLarge) once more than `record_limit` bytes were read since the parser last stood between two
    records (`between_records`, called by `_depth_bounded`): the parser then holds at most the limit and a buffer."""

    def __init__(self, handle: BinaryIO, progress: ProgressCallback, phase: str, record_limit: int):
        self.handle = handle
        self.progress = progress
        self.phase = phase
        self.record_limit = record_limit
        # ijson's buffer: small beside the limit, as the record's bytes are known to a buffer's precision
        self.buffer_size = max(16, min(64 * 1024, record_limit // 8))
        self.total = _size_of(handle)
        self.done = 0
        start = handle.read(len(UTF8_BOM))
        if start == UTF8_BOM:
            self.done = len(UTF8_BOM)
        else:
            handle.seek(0)
        self.record_start = self.done

    def between_records(self) -> None:
        self.record_start = self.done

    def read(self, size: int = -1) -> bytes:
        if self.done - self.record_start > self.record_limit:  # every byte so far is the one record's
            raise _TooLarge
        data = self.handle.read(size)
        self.done += len(data)
        self.progress(self.phase, self.done, self.total)
        return data


class _TooDeep(Exception):
    pass


class _TooLarge(Exception):
    pass


def _depth_bounded(events: Iterator[tuple], reader: _CountingReader) -> Iterator[tuple]:
    """ijson.basic_parse events, refused as soon as the nesting passes MAX_DEPTH; an event that leaves the parser at
    the top level (between two elements of the list, or at a member's key) tells the reader a record ended."""
    depth = 0
    for event in events:
        kind = event[0]
        if kind == "start_map" or kind == "start_array":
            depth += 1
            if depth > MAX_DEPTH:
                raise _TooDeep
        elif kind == "end_map" or kind == "end_array":
            depth -= 1
        if depth <= 1:
            reader.between_records()
        yield event


def _bounded_parse(reader: _CountingReader) -> Iterator[tuple]:
    """ijson.parse events of the file, depth-bounded (see MAX_DEPTH) and record-bounded (see _CountingReader)."""
    events = ijson.basic_parse(reader, use_float=True, buf_size=reader.buffer_size)
    return ijson.parse(_depth_bounded(events, reader))


def _too_deep(location: str) -> ImportFileError:
    return ImportFileError(f"the JSON is nested too deeply (more than {MAX_DEPTH} levels)", location=location)


def _too_large(number: int, limit: int) -> ImportFileError:
    return ImportFileError(str(RecordTooLarge("record", number, None, limit)))


def iter_json_list(
    opener: Opener, progress: ProgressCallback = no_progress, phase: str = "reading", *, record_limit: int
) -> Iterator:
    """Items of a top-level JSON list, one at a time: yields ("record k", item)."""
    index = 0
    with opener() as handle:
        reader = _CountingReader(handle, progress, phase, record_limit)
        try:
            for index, item in enumerate(ijson.items(_bounded_parse(reader), "item"), start=1):  # noqa: B007
                yield f"record {index}", item
        except _TooDeep:
            raise _too_deep(f"record {index + 1}") from None
        except _TooLarge:
            raise _too_large(index + 1, record_limit) from None
        except ijson.JSONError as error:
            raise ImportFileError(f"not valid JSON ({_ijson_message(error)})", location=f"record {index + 1}") from None


def iter_json_object(
    opener: Opener, progress: ProgressCallback = no_progress, phase: str = "reading", *, record_limit: int
) -> Iterator:
    """Members of a top-level JSON object, one at a time: yields ("record k (id 'key')", key, value)."""
    index = 0
    with opener() as handle:
        reader = _CountingReader(handle, progress, phase, record_limit)
        try:
            for index, (key, value) in enumerate(ijson.kvitems(_bounded_parse(reader), ""), start=1):  # noqa: B007
                yield f"record {index} (id '{key}')", key, value
        except _TooDeep:
            raise _too_deep(f"record {index + 1}") from None
        except _TooLarge:
            raise _too_large(index + 1, record_limit) from None
        except ijson.JSONError as error:
            raise ImportFileError(f"not valid JSON ({_ijson_message(error)})", location=f"record {index + 1}") from None


def iter_jsonl(
    opener: Opener, progress: ProgressCallback = no_progress, phase: str = "reading", *, record_limit: int
) -> Iterator:
    """One JSON value per line; blank lines are skipped: yields ("line n", value)."""
    with opener() as handle:
        total = _size_of(handle)
        done = 0
        for number, raw in enumerate(_lines(handle, record_limit), start=1):
            done += len(raw)
            if number == 1 and raw.startswith(UTF8_BOM):
                raw = raw[len(UTF8_BOM) :]
            if number % 500 == 0:
                progress(phase, done, total)
            if not raw.strip():
                continue
            try:
                value = loads(raw)
            except JSONInputError as error:
                raise ImportFileError(str(error), location=f"line {number}") from None
            yield f"line {number}", value
        progress(phase, done, total)


def iter_csv(
    opener: Opener,
    *,
    required_columns: tuple[str, ...],
    progress: ProgressCallback = no_progress,
    phase="reading",
    record_limit: int,
) -> Iterator:
    """Rows of a CSV file with a header line, as dicts: yields ("row n", row); n is the line number."""
    with opener() as handle:
        reader = csv.DictReader(_decoded_lines(handle, progress, phase, record_limit), restkey="__extra__")
        try:
            header = reader.fieldnames or []
        except csv.Error as error:
            raise ImportFileError(f"unreadable CSV header ({error})", location="line 1") from None
        missing = [column for column in required_columns if column not in header]
        if missing:
            raise ImportFileError(
                f"the header lacks column(s) {', '.join(missing)} (found: {', '.join(header) or 'nothing'})",
                location="line 1",
            )
        try:
            for row in reader:
                location = f"row {reader.line_num}"
                if "__extra__" in row:
                    raise ImportFileError("the row has more cells than the header has columns", location=location)
                yield location, row
        except csv.Error as error:
            raise ImportFileError(f"unreadable CSV ({error})", location=f"row {reader.line_num}") from None


def _lines(handle: BinaryIO, record_limit: int) -> Iterator[bytes]:
    """The file's lines, a line over `record_limit` bytes refused (by its number and size) without being held."""
    try:
        yield from bounded_lines(handle, record_limit)
    except RecordTooLarge as error:
        raise ImportFileError(str(error)) from None


def _decoded_lines(handle: BinaryIO, progress: ProgressCallback, phase: str, record_limit: int) -> Iterator[str]:
    """Text lines of a UTF-8 file (already checked by `file_facts`), for the csv module."""
    total = _size_of(handle)
    done = 0
    for number, raw in enumerate(_lines(handle, record_limit), start=1):
        done += len(raw)
        if number == 1 and raw.startswith(UTF8_BOM):
            raw = raw[len(UTF8_BOM) :]
        if number % 500 == 0:
            progress(phase, done, total)
        yield raw.decode("utf-8")
    progress(phase, done, total)


def _ijson_message(error: Exception) -> str:
    message = str(error).strip().splitlines()
    return message[0] if message else error.__class__.__name__
