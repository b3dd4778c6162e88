"""A record over the limit is refused by its number and size, without the reader ever holding it whole."""

import io
import json

import pytest

from audits.questionbank.reading import iter_csv, iter_json_list, iter_json_object, iter_jsonl
from audits.questionbank.records import ImportFileError
from edufair_web.record_bounds import (
    SKIP_CHUNK,
    UTF8_BOM,
    RecordTooLarge,
    bounded_lines,
    json_list_check,
    text_lines_check,
)

LIMIT = 100


class Watched(io.BytesIO):
    """A file that remembers the most bytes one call handed out, and how many in all."""

    def __init__(self, data: bytes):
        super().__init__(data)
        self.largest = self.total = 0

    def _seen(self, data: bytes) -> bytes:
        self.largest, self.total = max(self.largest, len(data)), self.total + len(data)
        return data

    def read(self, size=-1):
        return self._seen(super().read(size))

    def readline(self, size=-1):
        return self._seen(super().readline(size))


def test_a_line_at_the_limit_passes_its_ending_and_a_bom_not_counted():
    data = UTF8_BOM + b"a" * LIMIT + b"\r\n" + b"b" * LIMIT + b"\n" + b"c" * LIMIT
    assert [len(line) for line in bounded_lines(io.BytesIO(data), LIMIT)] == [LIMIT + 5, LIMIT + 1, LIMIT]


def test_a_long_line_is_refused_with_its_exact_size_read_in_pieces():
    handle = Watched(b"short\n" + b"x" * (3 * SKIP_CHUNK + 7) + b"\r\nafter\n")
    with pytest.raises(RecordTooLarge) as caught:
        list(bounded_lines(handle, LIMIT))
    assert str(caught.value) == (
        f"line 2 is {3 * SKIP_CHUNK + 7:,} bytes; a record may be at most 100 bytes (IMPORT_RECORD_MAX_BYTES)"
    )
    assert handle.largest <= SKIP_CHUNK


def test_text_lines_are_measured_in_utf8_bytes():
    text_lines_check("ok\n" + "é" * (LIMIT // 2) + "\n", LIMIT)
    with pytest.raises(RecordTooLarge, match=r"^line 3 is 102 bytes"):
        text_lines_check("ok\r\nok\n" + "é" * 51, LIMIT)


def test_a_json_list_element_is_measured_strings_and_all():
    inside = json.dumps('a, ], [, } and \\" ' + "z" * 40)  # separators inside a string are not separators
    json_list_check(f'[{inside}, {{"k": [1, 2, {inside}]}}]', LIMIT)
    with pytest.raises(RecordTooLarge, match=r"^task 3 is 1\d\d bytes; a record may be at most 100 bytes"):
        json_list_check(f"[1, {inside}, [{inside}, {inside}], 4]", LIMIT, kind="task")
    json_list_check('{"one": "' + "z" * 500 + '"}', LIMIT)  # one object: not a list of records


def _json_list(big: str) -> bytes:
    return json.dumps([{"a": 1}, big, {"c": 3}]).encode()


@pytest.mark.parametrize(
    ("reader", "data"),
    [
        (iter_json_list, _json_list("z" * 1_000_000)),
        (iter_json_list, _json_list({"deep": ["z" * 1000] * 1000})),
        (iter_json_object, json.dumps({"p1": {"a": 1}, "p2": {"b": "z" * 1_000_000}}).encode()),
    ],
    ids=["a long string", "a large object", "an object's member"],
)
def test_a_streamed_json_record_is_refused_before_it_is_read_whole(reader, data):
    handle = Watched(data)
    with pytest.raises(ImportFileError) as caught:
        list(reader(lambda: handle, record_limit=1000))
    assert str(caught.value) == (
        "record 2 is more than 1,000 bytes; a record may be at most 1,000 bytes (IMPORT_RECORD_MAX_BYTES)"
    )
    assert handle.total < 1000 * 2  # the record's first kilobyte or so, never the megabyte


def test_records_under_the_limit_stream_as_before():
    data = json.dumps([{"a": "z" * 800}] * 50).encode()
    assert len(list(iter_json_list(lambda: io.BytesIO(data), record_limit=1000))) == 50
    members = json.dumps({f"p{n}": {"a": "z" * 800} for n in range(50)}).encode()
    assert len(list(iter_json_object(lambda: io.BytesIO(members), record_limit=1000))) == 50


@pytest.mark.parametrize(
    ("reader", "data", "where"),
    [
        (iter_jsonl, b'{"a": 1}\n{"b": "' + b"z" * 5000 + b'"}\n', "line 2 is 5,009 bytes"),
        (iter_csv, b"id,text\na,b\nc," + b"z" * 5000 + b"\n", "line 3 is 5,002 bytes"),
    ],
)
def test_a_line_of_a_jsonl_or_csv_file_is_refused_by_number(reader, data, where):
    options = {"required_columns": ("id",)} if reader is iter_csv else {}
    with pytest.raises(ImportFileError, match=f"^{where}; a record may be at most 1,000 bytes"):
        list(reader(lambda: io.BytesIO(data), record_limit=1000, **options))
