"""The results exports written piece by piece, for responses that stream: CSV, JSON and Parquet.

Each is an iterator of bytes whose join is the export (`audits.exports`): a CSV table and the JSON results byte for byte
as `table_csv` and `results_json` write them in memory, a Parquet table with the CSV's columns and values. The raw
scores, the one table that grows with the audit, are read a chunk of dialogues at a time
(`audits.selectors.raw_scores`) and written a batch of rows at a time, so the memory an export takes does not grow
with the audit; the other tables come from the analysis, which is in memory already.
"""

from __future__ import annotations

import csv
import io
import json
import math
import uuid
from collections.abc import Collection, Iterable, Iterator, Mapping
from typing import Any

from audits.exports import (
    TABLES,
    csv_cell,
    export_tables,
    failed_judge_metrics,
    is_simulation,
    results_payload,
    table_columns,
)
from audits.selectors.raw_scores import raw_score_rows_chunked
from edufair_web.csv_cells import neutralise_text

ROWS_PER_PIECE = 2000  # rows written between two pieces of a CSV or JSON stream
ROWS_PER_GROUP = 20_000  # rows in a Parquet row group
PARQUET_CONTENT_TYPE = "application/vnd.apache.parquet"
_INTEGER_COLUMNS = frozenset(("dialogue", "tutor", "question", "condition"))
_FLOAT_COLUMNS = frozenset(("value",))
_BOOLEAN_COLUMNS = frozenset(("judge_validation_failed", "simulation"))


def _raw_rows(analysis, failed: Collection[str]) -> Iterator[dict[str, Any]]:
    """The raw scores table's rows (`export_tables`' ``raw_scores``), read in chunks."""
    for row in raw_score_rows_chunked(analysis.audit):
        row["judge_validation_failed"] = str(row["metric"]) in failed
        yield row


def _table_rows(analysis, table: str) -> Iterator[dict[str, Any]]:
    if table not in TABLES:
        raise ValueError(f"unknown table {table!r}; one of {', '.join(TABLES)}")
    if table == "raw_scores":
        return _raw_rows(analysis, failed_judge_metrics(analysis))
    return iter(export_tables(analysis, include_raw=False)[table])


def _first_and_rest(rows: Iterator[dict[str, Any]]) -> tuple[list[dict[str, Any]], Iterator[dict[str, Any]]]:
    first = next(rows, None)
    return ([] if first is None else [first]), rows


# --- CSV ---------------------------------------------------------------------------------------------


def table_csv_stream(analysis, table: str) -> Iterator[bytes]:
    """`exports.table_csv(analysis, table)` as UTF-8 pieces: the header, then a piece per `ROWS_PER_PIECE` rows."""
    first, rest = _first_and_rest(_table_rows(analysis, table))
    columns = table_columns(table, first)
    return _csv_pieces(columns, [*first], rest, simulation=csv_cell(is_simulation(analysis.audit)))


def _csv_pieces(
    columns: list[str], first: list[dict[str, Any]], rest: Iterator[dict[str, Any]], *, simulation: str
) -> Iterator[bytes]:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([csv_cell(column) for column in columns])
    row_columns = columns[:-1]  # `simulation`, the last, is the audit's
    written = 0
    for rows in (first, rest):
        for row in rows:
            writer.writerow([*(_cell(row.get(column)) for column in row_columns), simulation])
            written += 1
            if written % ROWS_PER_PIECE == 0:
                yield _take(out).encode()
    yield _take(out).encode()


def _float_cell(value: float) -> str:
    return "" if math.isnan(value) else repr(value)


# `csv_cell` by the value's exact type, for the types a row mostly holds; any other value goes through it.
_CELLS = {str: neutralise_text, int: str, float: _float_cell, bool: csv_cell, type(None): csv_cell}


def _cell(value: Any) -> str:
    return _CELLS.get(type(value), csv_cell)(value)


def _take(out: io.StringIO) -> str:
    text = out.getvalue()
    out.seek(0)
    out.truncate()
    return text


# --- JSON --------------------------------------------------------------------------------------------


def results_json_stream(analysis) -> Iterator[bytes]:
    """`exports.results_json(analysis)` as pieces: everything but the raw scores at once (it is the analysis),
    then the raw scores a piece per `ROWS_PER_PIECE` rows, then the document's end."""
    payload = results_payload(analysis, include_raw=False)
    marker = f"raw-scores-{uuid.uuid4().hex}"
    payload["tables"]["raw_scores"] = [marker]
    head, tail = json.dumps(payload, indent=1, allow_nan=False).split(json.dumps(marker))
    indent = head[head.rindex("\n") + 1 :]  # the rows' depth in the document
    first, rest = _first_and_rest(_raw_rows(analysis, payload["methods"]["judge_failed_metrics"]))
    return _json_pieces(head, tail, indent, first, rest)


def _json_pieces(
    head: str, tail: str, indent: str, first: list[dict[str, Any]], rest: Iterator[dict[str, Any]]
) -> Iterator[bytes]:
    if not first:  # an empty list is written `[]`, as json.dumps writes it
        yield (head[: head.rindex("[") + 1] + tail[tail.index("]") :]).encode()
        return
    keys: dict[str, str] = {}
    pieces = [head, json_row(first[0], indent, keys)]
    separator = ",\n" + indent
    for written, row in enumerate(rest, start=1):
        pieces.append(separator)
        pieces.append(json_row(row, indent, keys))
        if written % ROWS_PER_PIECE == 0:
            yield "".join(pieces).encode()
            pieces.clear()
    pieces.append(tail)
    yield "".join(pieces).encode()


_encode_text = json.encoder.encode_basestring_ascii


def _scalar(value: Any) -> str | None:
    """A flat value as `json.dumps` writes it (ASCII, NaN refused), or None for any other value."""
    if isinstance(value, str):
        return _encode_text(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float) and math.isfinite(value):
        return float.__repr__(value)
    return None


def json_row(row: Mapping[str, Any], indent: str, keys: dict[str, str] | None = None) -> str:
    """One row of a table as `json.dumps(document, indent=1)` writes it at the depth of ``indent`` (the spaces
    before its opening brace), NaN as null; written directly when every value is flat, else by json.dumps.
    ``keys``: a cache of the keys as written."""
    keys = {} if keys is None else keys
    parts = []
    for key, value in row.items():
        written = _scalar(value)
        if written is None or not isinstance(key, str):
            return _nested_row(row, indent)
        if key not in keys:
            keys[key] = f"\n{indent} {_encode_text(key)}: "
        parts.append(keys[key] + written)
    if not parts:
        return "{}"
    return "{" + ",".join(parts) + "\n" + indent + "}"


def _nested_row(row: Mapping[str, Any], indent: str) -> str:
    safe = {str(key): (None if isinstance(v, float) and not math.isfinite(v) else v) for key, v in row.items()}
    return json.dumps(safe, indent=1, allow_nan=False).replace("\n", "\n" + indent)


# --- Parquet ------------------------------------------------------------------------------------------


class _Pieces:
    """A file that pyarrow writes into and the stream empties after each row group."""

    closed = False

    def __init__(self) -> None:
        self.parts: list[bytes] = []
        self.position = 0

    def write(self, data) -> int:
        self.parts.append(bytes(data))
        self.position += len(data)
        return len(data)

    def tell(self) -> int:
        return self.position

    def flush(self) -> None:
        pass

    def take(self) -> bytes:
        data = b"".join(self.parts)
        self.parts.clear()
        return data


def table_parquet_stream(analysis, table: str) -> Iterator[bytes]:
    """A table as Parquet: the CSV's columns and values (numbers as numbers, flags as booleans, lists as lists, NaN
    as null). The raw scores have fixed types and go a row group per `ROWS_PER_GROUP` rows, each written out as it
    is made; the other tables (the analysis's, in memory already) take the types their rows have."""
    rows = _table_rows(analysis, table)
    simulation = is_simulation(analysis.audit)
    if table == "raw_scores":
        first, rest = _first_and_rest(rows)
        columns = table_columns(table, first)
        return _parquet_groups(columns, _chain(first, rest), simulation)
    held = list(rows)
    return _parquet_whole(table_columns(table, held), held, simulation)


def _chain(first: list[dict[str, Any]], rest: Iterator[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    yield from first
    yield from rest


def _parquet_value(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, tuple):
        return list(value)
    return value


def _records(rows: Iterable[dict[str, Any]], columns: list[str], simulation: bool) -> list[dict[str, Any]]:
    data_columns = columns[:-1]  # `simulation`, the last, is the audit's
    return [
        {**{column: _parquet_value(row.get(column)) for column in data_columns}, "simulation": simulation}
        for row in rows
    ]


def _columns(rows: list[dict[str, Any]], columns: list[str], simulation: bool) -> dict[str, list[Any]]:
    """A group of raw score rows by column (the cheaper form: a row's values are shared with its dialogue's)."""
    data = {column: [_parquet_value(row.get(column)) for row in rows] for column in columns[:-1]}
    data["simulation"] = [simulation] * len(rows)
    return data


def _raw_schema(columns: list[str]):
    import pyarrow as pa  # imported here: pyarrow takes a second, and only this download needs it

    def kind(column: str):
        if column in _INTEGER_COLUMNS:
            return pa.int64()
        if column in _FLOAT_COLUMNS:
            return pa.float64()
        if column in _BOOLEAN_COLUMNS:
            return pa.bool_()
        return pa.string()

    return pa.schema([(column, kind(column)) for column in columns])


def _parquet_groups(columns: list[str], rows: Iterator[dict[str, Any]], simulation: bool) -> Iterator[bytes]:
    import pyarrow as pa  # imported here: pyarrow takes a second, and only this download needs it
    import pyarrow.parquet as pq

    schema = _raw_schema(columns)
    sink = _Pieces()
    writer = pq.ParquetWriter(sink, schema)
    group: list[dict[str, Any]] = []
    for row in rows:
        group.append(row)
        if len(group) == ROWS_PER_GROUP:
            writer.write_table(pa.Table.from_pydict(_columns(group, columns, simulation), schema=schema))
            group.clear()
            yield sink.take()
    if group:
        writer.write_table(pa.Table.from_pydict(_columns(group, columns, simulation), schema=schema))
    writer.close()
    yield sink.take()


def _parquet_whole(columns: list[str], rows: list[dict[str, Any]], simulation: bool) -> Iterator[bytes]:
    import pyarrow as pa  # imported here: pyarrow takes a second, and only this download needs it
    import pyarrow.parquet as pq

    records = _records(rows, columns, simulation)
    if records:
        table = pa.Table.from_pylist(records)
    else:
        table = pa.Table.from_pylist([], schema=pa.schema([(column, pa.null()) for column in columns]))
    sink = _Pieces()
    pq.write_table(table, sink, row_group_size=ROWS_PER_GROUP)
    yield sink.take()
