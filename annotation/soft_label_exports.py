"""Exports of every item's soft labels under every aggregation method, as CSV, JSONL or Parquet.

The soft label is the posterior over the question's values. A row per (stage, question, method, item), methods as
`annotation.crowd_aggregation.METHODS` lists them: the aggregated label, its posterior, the item's number of labels, its
adjudicated final and gold values, and one column per value, ``p_<value>``, holding the soft label (the question's
values; a value of another question is empty in CSV, null in Parquet, absent in JSONL, so each row's ``p_`` columns
sum to 1). ``pandas.read_csv``, ``pandas.read_json(lines=True)`` and ``pyarrow.parquet`` read the files as they are.
CSV cells a spreadsheet would read as a formula are neutralised, as in the labels export.
"""

from __future__ import annotations

import csv
import io
import json

from annotation.models import AnnotationProject
from annotation.selectors.crowd_aggregation import project_aggregation
from edufair_web.csv_cells import neutralise_cell

SOFT_LABEL_FORMATS = ("soft-csv", "soft-jsonl", "soft-parquet")
SOFT_LABEL_FIELDS = (
    "project",
    "stage",
    "stage_name",
    "question",
    "item_id",
    "external_id",
    "method",
    "label",
    "posterior",
    "n_labels",
    "final_value",
    "gold_value",
)
VALUE_PREFIX = "p_"
_INTEGER_FIELDS = ("project", "stage", "item_id", "n_labels")
_FLOAT_FIELDS = ("posterior",)


def soft_label_records(project: AnnotationProject) -> tuple[list[dict], list[str]]:
    """(records, the ``p_<value>`` columns in order: each question's values in stage and question order)."""
    records: list[dict] = []
    columns: dict[str, None] = {}
    for stage in project_aggregation(project, items=True):
        for question in stage["questions"]:
            for value in question["values"]:
                columns.setdefault(VALUE_PREFIX + value)
            for method in question["methods"]:
                for item in method.get("items", ()):
                    records.append(
                        {
                            "project": project.id,
                            "stage": stage["order"],
                            "stage_name": stage["name"],
                            "question": question["question"],
                            "item_id": item["item_id"],
                            "external_id": item["external_id"],
                            "method": method["method"],
                            "label": item["label"],
                            "posterior": item["posterior"],
                            "n_labels": item["n_labels"],
                            "final_value": item["final_value"],
                            "gold_value": item["gold_value"],
                            **{VALUE_PREFIX + value: p for value, p in item["soft_label"].items()},
                        }
                    )
    return records, list(columns)


def _csv(records: list[dict], columns: list[str]) -> str:
    out = io.StringIO()
    writer = csv.writer(out)
    header = [*SOFT_LABEL_FIELDS, *columns]
    writer.writerow([neutralise_cell(name) for name in header])
    for record in records:
        writer.writerow([neutralise_cell("" if record.get(name) is None else record[name]) for name in header])
    return out.getvalue()


def _parquet(records: list[dict], columns: list[str]) -> bytes:
    # Imported here: pyarrow (a crowd-kit dependency) is only needed by this download.
    import pyarrow as pa
    import pyarrow.parquet as pq

    types = {name: pa.int64() for name in _INTEGER_FIELDS} | {name: pa.float64() for name in _FLOAT_FIELDS}
    schema = pa.schema(
        [(name, types.get(name, pa.string())) for name in SOFT_LABEL_FIELDS]
        + [(name, pa.float64()) for name in columns]
    )
    table = pa.Table.from_pylist(records, schema=schema)
    out = io.BytesIO()
    pq.write_table(table, out)
    return out.getvalue()


def export_soft_labels(project: AnnotationProject, fmt: str) -> tuple[str | bytes, str, str]:
    """(body, content type, file name) of the soft-label export in ``fmt``."""
    stem = f"annotation-{project.id}-soft-labels"
    if fmt not in SOFT_LABEL_FORMATS:
        raise ValueError(f"format is one of {', '.join(SOFT_LABEL_FORMATS)}")
    records, columns = soft_label_records(project)
    if fmt == "soft-csv":
        return _csv(records, columns), "text/csv; charset=utf-8", f"{stem}.csv"
    if fmt == "soft-jsonl":
        body = "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records)
        return body, "application/x-ndjson", f"{stem}.jsonl"
    return _parquet(records, columns), "application/vnd.apache.parquet", f"{stem}.parquet"
