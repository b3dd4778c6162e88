"""Which of Label Studio's other export formats a file is (CSV, TSV, JSON-MIN), told in words, or None (pure).

The import reads Label Studio's JSON export only. A CSV or TSV export failed as "not valid JSON (Extra data …)" and a
JSON-MIN export as one "no 'data' object" error per task; each is now refused once, saying what the file is and which
export to make instead."""

from __future__ import annotations

from edufair_web.error_quotes import shown

EXPORT_AGAIN = "Export as JSON (not JSON-MIN/CSV) from Label Studio's Export dialog"
# Columns Label Studio's CSV/TSV and JSON-MIN exports add beside the task's data and the answers.
FLAT_COLUMNS = ("annotator", "annotation_id", "lead_time", "updated_at")


def _first_line(content: bytes | str) -> str:
    head = content[:4096]
    text = head.decode("utf-8", "replace") if isinstance(head, bytes) else head
    return text.lstrip("\ufeff \t\r\n").split("\n", 1)[0].rstrip("\r")


def delimited_export(content: bytes | str) -> str | None:
    """Why a CSV or TSV file is refused, or None when the file may be JSON (it starts with ``[`` or ``{``)."""
    line = _first_line(content)
    if not line or line[0] in "[{":
        return None
    if "\t" in line:
        kind = "a TSV file (Label Studio's TSV export"
    elif "," in line:
        kind = "a CSV file (Label Studio's CSV export"
    else:
        return None
    columns = [column.strip().strip('"') for column in line.split("\t" if "\t" in line else ",")]
    known = [column for column in columns if column in FLAT_COLUMNS]
    seen = f", with the columns {', '.join(known)}" if known else ""
    return (
        f"file: this is {kind}{seen}, or a table), not Label Studio's JSON export: its first line is "
        f"{shown(repr(line))}. A table has one column per question and no annotation records, so who answered what, "
        f"and the provenance, cannot be read back. {EXPORT_AGAIN}."
    )


def json_min_export(first_task) -> str | None:
    """Why a list of flattened tasks (Label Studio's JSON-MIN export: no ``data`` object, the answers as top-level
    keys) is refused, judged by its first task; None when that task is not flat."""
    if not isinstance(first_task, dict) or "data" in first_task or "annotations" in first_task:
        return None
    known = [key for key in FLAT_COLUMNS if key in first_task]
    seen = f" (task 1 has {', '.join(known)} beside its text)" if known else ""
    return (
        f"file: this is Label Studio's JSON-MIN export{seen}: tasks flattened to their data and answers, with no "
        f"'data' object and no annotation records, so who answered what, and the provenance, cannot be read back. "
        f"{EXPORT_AGAIN}."
    )
