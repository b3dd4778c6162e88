"""An audit's exports written into a folder (`manage.py audit_report`), each file from the pieces its download is.

Every CSV table and the JSON results come from the streams the downloads send (`audits.export_streams`), the methods
sidecar and the HTML report from the functions their downloads call, so a file holds its download's bytes. A file is
written piece by piece as the pieces come (the raw scores a chunk of dialogues at a time), under a temporary name that
takes the file's own once it is whole: the memory the command takes does not grow with the audit, and a command that
stops halfway leaves no half file under an export's name.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from functools import partial
from pathlib import Path

from audits.export_streams import results_json_stream, table_csv_stream
from audits.exports import TABLES, export_filename, methods_json, results_html


def report_files(analysis) -> Iterator[tuple[str, Callable[[], Iterable[bytes]]]]:
    """(file name, what makes its pieces) for every export of the analysis: one CSV per table, the CSVs' methods
    sidecar, the JSON results and the HTML report. Nothing is read or made until a file's pieces are asked for."""
    audit = analysis.audit
    for table in TABLES:
        yield export_filename(audit, table, "csv"), partial(table_csv_stream, analysis, table)
    # The methods and the report are made whole, as their downloads are: the analysis's size, not the audit's.
    yield export_filename(audit, "methods", "json"), lambda: [methods_json(analysis).encode()]
    yield export_filename(audit, "results", "json"), partial(results_json_stream, analysis)
    yield export_filename(audit, "report", "html"), lambda: [results_html(analysis).encode()]


def report_file_write(path: Path, pieces: Iterable[bytes]) -> Path:
    """Write `pieces` to `path` as they come, under a temporary name in the same folder that becomes `path` once
    the last piece is written."""
    unfinished = path.with_name(f".{path.name}.part")
    try:
        with unfinished.open("wb") as out:
            for piece in pieces:
                out.write(piece)
        os.replace(unfinished, path)
    finally:
        unfinished.unlink(missing_ok=True)
    return path


def write_report(analysis, out_dir: Path) -> list[Path]:
    """Every export into a folder (the `audit_report` command): one CSV per table, the CSVs' methods sidecar, the
    JSON results and the HTML report; the paths written, in that order."""
    out_dir.mkdir(parents=True, exist_ok=True)
    return [report_file_write(out_dir / name, pieces()) for name, pieces in report_files(analysis)]
