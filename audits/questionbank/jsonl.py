"""Generic importer: questions from JSON lines (or a JSON list) or CSV, in one documented schema.

Schema (one record = one question):

| field              | required | type                                   | notes                                     |
|--------------------|----------|----------------------------------------|-------------------------------------------|
| domain             | yes      | text                                   | lower-case word: mathematics, physics, …  |
| text               | yes      | text                                   | the problem as the student sees it        |
| answer             | yes      | text or number                         | the ground-truth final answer             |
| id                 | no       | text or number                         | default: a hash of text + answer          |
| solution           | no       | text                                   | worked solution, shown to the tutor       |
| support            | no       | text                                   | background paragraph                      |
| choices            | no       | list of texts                          | CSV: a JSON list, or texts joined by "|"  |
| metadata           | no       | object                                 | CSV: a JSON object                        |
| reference_dialogue | no       | list of {"role": tutor|student, "text"} | CSV: a JSON list                          |

Other fields are kept under metadata["extra"]. CSV files need a header line naming the columns. A record
whose id repeats an earlier one in the same file is dropped (counted in the funnel). The file is read
twice, line by line — once to validate everything, once to write — so a large file is never held in
memory. Pure: no Django.
"""

import re

from edufair_web.json_input import JSONInputError, loads

from .reading import FileFacts, Opener, iter_csv, iter_json_list, iter_jsonl
from .records import (
    FunnelStep,
    ImportFileError,
    ImportScan,
    ProgressCallback,
    QuestionData,
    content_hash,
    no_progress,
    optional_text,
    reject_nul,
    require_answer,
    require_object,
    require_text,
    type_name,
)

SOURCE = "generic"
FORMATS = ("jsonl", "json", "csv")
REQUIRED_FIELDS = ("domain", "text", "answer")
KNOWN_FIELDS = (*REQUIRED_FIELDS, "id", "solution", "support", "choices", "metadata", "reference_dialogue")
DOMAIN_PATTERN = re.compile(r"[a-z][a-z0-9_-]{0,39}")
ROLES = ("tutor", "student")


def detect_format(filename: str, facts: FileFacts, requested: str = "auto") -> str:
    if requested in FORMATS:
        return requested
    if filename.lower().endswith(".csv"):
        return "csv"
    if facts.first_char == "[":
        return "json"
    if facts.first_char == "{":
        return "jsonl"
    raise ImportFileError(
        f"cannot tell the format: expected JSON lines, a JSON list or a .csv file, found '{facts.first_char}' first"
    )


def parse_record(location: str, raw, *, from_csv: bool = False) -> QuestionData:
    record = require_object(raw, location=location)
    reject_nul(record, location=location)
    if from_csv:
        record = _decode_csv_cells(record, location)
    domain = require_text(record, "domain", location=location).strip().lower()
    if not DOMAIN_PATTERN.fullmatch(domain):
        raise ImportFileError(
            "must be one lower-case word such as mathematics, physics or chemistry",
            location=location,
            field_name="domain",
        )
    text = require_text(record, "text", location=location)
    answer = require_answer(record, "answer", location=location)
    source_id = _record_id(record, location) or content_hash(text, answer)[:24]
    metadata = record.get("metadata") or {}
    if not isinstance(metadata, dict):
        raise ImportFileError(
            f"expected an object, found {type_name(metadata)}", location=location, field_name="metadata"
        )
    extra = {key: value for key, value in record.items() if key not in KNOWN_FIELDS}
    if extra:
        metadata = {**metadata, "extra": extra}
    return QuestionData(
        domain=domain,
        source=SOURCE,
        source_id=source_id,
        text=text,
        answer=answer,
        solution=optional_text(record, "solution", location=location),
        support=optional_text(record, "support", location=location),
        choices=_choices(record, location),
        reference_dialogue=_dialogue(record, location),
        metadata=metadata,
    )


def _record_id(record: dict, location: str) -> str:
    value = record.get("id")
    if value is None or value == "":
        return ""
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise ImportFileError(
            f"expected text or a whole number, found {type_name(value)}", location=location, field_name="id"
        )
    return str(value).strip()[:200]


def _choices(record: dict, location: str) -> list[str]:
    value = record.get("choices")
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(choice, str) for choice in value):
        raise ImportFileError("expected a list of texts", location=location, field_name="choices")
    return value


def _dialogue(record: dict, location: str) -> list[dict]:
    value = record.get("reference_dialogue")
    if value is None:
        return []
    if not isinstance(value, list):
        raise ImportFileError(
            f"expected a list of turns, found {type_name(value)}", location=location, field_name="reference_dialogue"
        )
    turns = []
    for number, turn in enumerate(value, start=1):
        if not isinstance(turn, dict) or turn.get("role") not in ROLES or not isinstance(turn.get("text"), str):
            raise ImportFileError(
                f'turn {number} must be {{"role": "tutor" or "student", "text": "…"}}',
                location=location,
                field_name="reference_dialogue",
            )
        turns.append({"role": turn["role"], "text": turn["text"]})
    return turns


def _decode_csv_cells(row: dict, location: str) -> dict:
    """CSV cells are text; decode the structured columns and drop empty optional cells."""
    decoded = {key: value for key, value in row.items() if value not in (None, "") or key in REQUIRED_FIELDS}
    for name in ("choices", "metadata", "reference_dialogue"):
        cell = decoded.get(name)
        if cell is None:
            continue
        if name == "choices" and not cell.lstrip().startswith("["):
            decoded[name] = [part.strip() for part in cell.split("|") if part.strip()]
            continue
        try:
            decoded[name] = loads(cell)
        except JSONInputError as error:
            raise ImportFileError(f"in the cell: {error}", location=location, field_name=name) from None
    return decoded


def _records(opener: Opener, file_format: str, progress: ProgressCallback, phase: str, record_limit: int):
    if file_format == "csv":
        rows = iter_csv(
            opener, required_columns=REQUIRED_FIELDS, progress=progress, phase=phase, record_limit=record_limit
        )
        for location, row in rows:
            yield parse_record(location, row, from_csv=True)
    else:
        reader = iter_json_list if file_format == "json" else iter_jsonl
        for location, raw in reader(opener, progress, phase, record_limit=record_limit):
            yield parse_record(location, raw)


def generic_scan(
    opener: Opener,
    facts: FileFacts,
    *,
    filename: str = "",
    file_format: str = "auto",
    progress: ProgressCallback = no_progress,
    record_limit: int,
) -> ImportScan:
    file_format = detect_format(filename, facts, file_format)
    records_in = 0
    seen: set[str] = set()
    per_domain: dict[str, int] = {}
    for item in _records(opener, file_format, progress, "validating", record_limit):
        records_in += 1
        if item.source_id in seen:
            continue
        seen.add(item.source_id)
        per_domain[item.domain] = per_domain.get(item.domain, 0) + 1
    if not records_in:
        raise ImportFileError("the file contains no records")
    kept_count = len(seen)
    del seen

    def questions():
        # Second pass: the file was fully validated above, so this cannot fail half-way on bad data.
        written: set[str] = set()
        for item in _records(opener, file_format, no_progress, "writing", record_limit):
            if item.source_id not in written:
                written.add(item.source_id)
                yield item

    funnel = [
        FunnelStep("records in", records_in, {"format": file_format}),
        FunnelStep(
            "distinct ids (kept)", kept_count, {"duplicates dropped": records_in - kept_count, "per domain": per_domain}
        ),
    ]
    return ImportScan(funnel=funnel, kept_count=kept_count, questions=questions, parameters={"format": file_format})
