"""Item import from JSONL or CSV, all or nothing and idempotent.

Every row is checked first, and nothing is written unless every row is right (errors name the line and the field);
importing the same file twice changes nothing.

JSONL, one object per line::

    {"id": "m-001", "text": "What is 3/4 + 1/8?", "subject": "mathematics", "category": "Cognitive",
     "modality": "single", "gold": {"domain_valid": {"value": "valid", "rationale": "..."}}}

A dialogue uses ``"turns": [{"role": "student", "text": "..."}, ...]`` and ``"highlight": <index>``
instead of (or with) ``"text"``; ``modality`` defaults to ``multi`` for more than two turns. ``gold`` values
may be a plain value or ``{"value", "rationale"}``. CSV has the columns ``id, text, subject, category,
modality, turns`` (``turns`` as JSON), ``highlight``, and ``gold_<question key>`` /
``rationale_<question key>`` pairs.

Items imported while a stage's main labelling is open join it at once when its item rule takes them
(`services.assignment.project_main_items_sync`), and are handed out like the first ones.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field

from django.db import transaction

from annotation.models import AnnotationProject, GoldLabel, Item, StageLabelling
from annotation.services.assignment import project_main_items_sync
from annotation.subjects import subject_problem
from edufair_web.json_input import JSONInputError, loads
from edufair_web.record_bounds import RecordTooLarge, text_lines_check
from edufair_web.storable_text import unstorable_in
from edufair_web.upload_limits import record_limit

# The errors kept (and answered) for a rejected file; the rest are counted ("… and N more"). A quoted value is
# cut to QUOTED_CHARS, so a rejection stays a few KB whatever the file holds.
MAX_ERRORS = 50
QUOTED_CHARS = 60


class ImportFailed(ValueError):
    """Nothing was imported; ``errors`` lists the first MAX_ERRORS (line, field, message), ``total`` counts all."""

    def __init__(self, errors: list[tuple[int, str, str]], total: int | None = None):
        self.errors = errors[:MAX_ERRORS]
        self.total = max(total if total is not None else len(errors), len(self.errors))
        shown = "; ".join(f"line {line}, {name}: {message}" for line, name, message in self.errors[:10])
        super().__init__(f"{self.total} error(s), nothing imported: {shown}{self.more_text(10)}")

    def sentences(self, shown: int = MAX_ERRORS) -> list[str]:
        """The first ``shown`` errors as sentences, then how many more there are, then that nothing was imported."""
        listed = [error_sentence(*error) for error in self.errors[:shown]]
        more = self.more(min(shown, len(self.errors)))
        if more:
            listed.append(more_errors_sentence(more))
        return [*listed, "Nothing was imported."]

    def more(self, shown: int) -> int:
        """How many errors lie beyond the first `shown`."""
        return max(self.total - shown, 0)

    def more_text(self, shown: int) -> str:
        more = self.more(min(shown, len(self.errors)))
        return f" … and {more} more" if more else ""


def more_errors_sentence(more: int) -> str:
    """How many errors an import found beyond those it lists, as a sentence."""
    return f"There {'is' if more == 1 else 'are'} {more} more error{'' if more == 1 else 's'}."


def error_sentence(line: int, name: str, message: str) -> str:
    """One import error as a sentence: where (the line and field, or the file), then what is wrong."""
    where = f"Line {line}, {name}" if line else f"The {name}"
    message = message.rstrip(".?!") + (message[-1] if message[-1:] in "?!" else ".") if message else "is wrong."
    return f"{where}: {message}"


def _cut(text: str) -> str:
    return text if len(text) <= QUOTED_CHARS else f"{text[: QUOTED_CHARS - 1]}…"


def _quoted(value) -> str:
    return _cut(repr(value))


@dataclass
class ImportReport:
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    gold_labels: int = 0
    item_ids: list[int] = field(default_factory=list)
    # Stage id → items that joined its open main labelling with this import.
    main_items_added: dict[int, int] = field(default_factory=dict)
    # Stages whose explicit item list leaves out imported items (without gold): they reach no annotator there.
    left_off_lists: list[LeftOffList] = field(default_factory=list)

    def summary(self) -> str:
        return (
            f"Imported: {self.created} new, {self.updated} updated, {self.unchanged} unchanged, "
            f"{self.gold_labels} gold labels."
        )

    def notices(self) -> list[str]:
        return [left_off.sentence() for left_off in self.left_off_lists]

    def as_dict(self) -> dict:
        return {
            "created": self.created,
            "updated": self.updated,
            "unchanged": self.unchanged,
            "gold_labels": self.gold_labels,
            "main_items_added": {str(stage): n for stage, n in self.main_items_added.items()},
            "notices": self.notices(),
            "left_off_lists": [left_off.as_dict() for left_off in self.left_off_lists],
        }


@dataclass(frozen=True)
class LeftOffList:
    """Imported items a stage's explicit item list does not name, so they never reach its annotators."""

    stage_id: int
    stage_order: int
    stage_name: str
    item_ids: tuple[int, ...]
    external_ids: tuple[str, ...]

    def sentence(self) -> str:
        n = len(self.item_ids)
        return (
            f"{n} item{'s were' if n != 1 else ' was'} imported; stage {self.stage_order} ({self.stage_name}) uses an "
            f"explicit item list, so {'they' if n != 1 else 'it'} will not reach its annotators until added."
        )

    def as_dict(self) -> dict:
        return {"stage": self.stage_id, "item_ids": list(self.item_ids), "external_ids": list(self.external_ids)}


@dataclass
class _Row:
    line: int
    external_id: str
    payload: dict
    subject: str
    category: str
    modality: str
    metadata: dict
    gold: dict[str, tuple[str, str]]


def _read_jsonl(text: str) -> list[tuple[int, dict | None, str | None]]:
    rows = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = loads(line)
        except JSONInputError as exc:
            rows.append((number, None, str(exc)))
            continue
        if not isinstance(record, dict):
            rows.append((number, None, "each line must be a JSON object"))
            continue
        rows.append((number, record, None))
    return rows


def _read_csv(text: str) -> list[tuple[int, dict | None, str | None]]:
    reader = csv.DictReader(io.StringIO(text))
    rows = []
    records = iter(reader)
    while True:
        try:
            record = next(records)
        except StopIteration:
            break
        except csv.Error as exc:  # e.g. a cell over csv.field_size_limit(): the rest of the file cannot be read
            rows.append((reader.line_num, None, f"unreadable CSV ({exc})"))
            break
        number = reader.line_num
        gold = {}
        for column, value in record.items():
            if column and column.startswith("gold_") and value not in (None, ""):
                key = column[len("gold_") :]
                gold[key] = {"value": value, "rationale": record.get(f"rationale_{key}") or ""}
        converted: dict = {k: v for k, v in record.items() if k and not k.startswith(("gold_", "rationale_"))}
        if converted.get("turns"):
            try:
                converted["turns"] = loads(converted["turns"])
            except JSONInputError as exc:
                rows.append((number, None, f"turns: {exc}"))
                continue
        else:
            converted.pop("turns", None)
        if converted.get("highlight") not in (None, ""):
            converted["highlight"] = converted["highlight"]
        else:
            converted.pop("highlight", None)
        converted["gold"] = gold
        rows.append((number, converted, None))
    return rows


def _parse(project: AnnotationProject, records, questions: dict) -> tuple[list[_Row], list[tuple[int, str, str]], int]:
    """Rows without errors, the first MAX_ERRORS errors, and the count of all errors."""
    rows, errors, seen = [], [], {}
    error_count = 0
    for number, record, problem in records:
        if problem:
            error_count += 1
            if len(errors) < MAX_ERRORS:
                errors.append((number, "line", problem))
            continue
        unstorable = unstorable_in(record)
        if unstorable:
            error_count += 1
            if len(errors) < MAX_ERRORS:
                errors.append((number, "line", f"contains {unstorable}, which cannot be stored"))
            continue
        row_errors = []
        external_id = str(record.get("id") or record.get("external_id") or "").strip()
        if not external_id:
            row_errors.append((number, "id", "missing"))
        elif len(external_id) > 200:
            row_errors.append((number, "id", "longer than 200 characters"))
        elif external_id in seen:
            row_errors.append((number, "id", f"{_quoted(external_id)} already appears on line {seen[external_id]}"))
        else:
            seen[external_id] = number
        text = record.get("text")
        turns = record.get("turns")
        payload: dict = {}
        if text not in (None, ""):
            payload["text"] = str(text)
        if turns is not None:
            if not isinstance(turns, list) or not all(
                isinstance(t, dict) and isinstance(t.get("text"), str) and t.get("role") for t in turns
            ):
                row_errors.append((number, "turns", 'must be a list of {"role": ..., "text": ...}'))
            else:
                payload["turns"] = [{"role": str(t["role"]), "text": t["text"]} for t in turns]
        if not payload:
            row_errors.append((number, "text", "an item needs text or turns"))
        highlight = record.get("highlight")
        if highlight not in (None, ""):
            try:
                highlight = int(highlight)
            except (TypeError, ValueError, OverflowError):  # OverflowError: Infinity
                row_errors.append((number, "highlight", "must be a turn index"))
            else:
                if not 0 <= highlight < len(payload.get("turns", [])):
                    row_errors.append((number, "highlight", f"{_cut(str(highlight))} is not the index of a turn"))
                payload["highlight"] = highlight
        modality = str(record.get("modality") or ("multi" if len(payload.get("turns", [])) > 2 else "single"))
        if modality not in Item.Modality.values:
            row_errors.append(
                (number, "modality", f"{_quoted(modality)} is not one of {', '.join(Item.Modality.values)}")
            )
        category = str(record.get("category") or "").strip()
        subject = str(record.get("subject") or "").strip()
        for name, value, longest in (("category", category, 200), ("subject", subject, 100)):
            if len(value) > longest:
                row_errors.append((number, name, f"longer than {longest} characters"))
        if project.categories and category and category not in project.categories:
            row_errors.append((number, "category", f"{_quoted(category)} is not a category of the project"))
        wrong_subject = subject_problem(subject, project.subjects or ())
        if wrong_subject:
            row_errors.append((number, "subject", wrong_subject))
        metadata = record.get("metadata") or {}
        if not isinstance(metadata, dict):
            row_errors.append((number, "metadata", "must be an object"))
        gold: dict[str, tuple[str, str]] = {}
        raw_gold = record.get("gold") or {}
        if not isinstance(raw_gold, dict):
            row_errors.append((number, "gold", "must be an object of question key → value"))
            raw_gold = {}
        for key, entry in raw_gold.items():
            value, rationale = (
                (entry.get("value"), entry.get("rationale", "")) if isinstance(entry, dict) else (entry, "")
            )
            question = questions.get(key)
            if question is None:
                row_errors.append((number, f"gold.{_cut(str(key))}", "no such question in the project"))
            elif str(value) not in question.values:
                choices = ", ".join(question.values)
                row_errors.append((number, f"gold.{key}", f"{_quoted(value)} is not one of the choices ({choices})"))
            else:
                gold[key] = (str(value), str(rationale or ""))
        error_count += len(row_errors)
        errors.extend(row_errors[: MAX_ERRORS - len(errors)])
        if not row_errors and not error_count:
            rows.append(_Row(number, external_id, payload, subject, category, modality, metadata, gold))
    return rows, errors, error_count


def _format_mismatch(content: str, fmt: str) -> str:
    """A file plainly in the other format (a CSV header row of column names sent as JSONL, JSON lines sent as
    CSV), said in one message instead of an error per line."""
    first = next((line.strip() for line in content.splitlines() if line.strip()), "")
    header = [cell.strip().strip('"') for cell in first.split(",")]
    if fmt == "jsonl" and len(header) > 1 and all(re.fullmatch(r"\w+", cell) for cell in header):
        return f"this looks like CSV (first line: {_quoted(first)}), not JSON Lines: choose the CSV format"
    if fmt == "csv" and first.startswith("{"):
        return "this looks like JSON Lines (the first line is a JSON object), not CSV: choose the JSONL format"
    return ""


def items_import(*, project: AnnotationProject, content: str | bytes, fmt: str) -> ImportReport:
    """Check every row, then create or update the items and their gold labels in one transaction."""
    if isinstance(content, bytes):
        try:
            content = content.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise ImportFailed([(0, "file", f"not UTF-8 text ({exc.reason})")]) from exc
    readers = {"jsonl": _read_jsonl, "csv": _read_csv}
    if fmt not in readers:
        raise ImportFailed([(0, "format", f"{_quoted(fmt)} is not one of jsonl, csv")])
    try:  # before any line is parsed: a parsed record takes several times its text
        text_lines_check(content, record_limit())
    except RecordTooLarge as exc:
        raise ImportFailed([(exc.number, "line", str(exc))]) from None
    mismatch = _format_mismatch(content, fmt)
    if mismatch:
        raise ImportFailed([(1, "format", mismatch)])
    questions = {q.key: q for q in project.questions.all()}
    rows, errors, error_count = _parse(project, readers[fmt](content), questions)
    if error_count:
        raise ImportFailed(errors, total=error_count)
    if not rows:
        raise ImportFailed([(0, "file", "no items in the file")])
    report = ImportReport()
    with transaction.atomic():
        existing = {
            i.external_id: i
            for i in Item.objects.filter(project=project, external_id__in=[r.external_id for r in rows])
        }
        for row in rows:
            fields = {
                "payload": row.payload,
                "subject": row.subject,
                "category": row.category,
                "modality": row.modality,
                "metadata": row.metadata,
            }
            item = existing.get(row.external_id)
            if item is None:
                item = Item.objects.create(project=project, external_id=row.external_id, **fields)
                report.created += 1
            elif any(getattr(item, name) != value for name, value in fields.items()):
                for name, value in fields.items():
                    setattr(item, name, value)
                item.save(update_fields=list(fields))
                report.updated += 1
            else:
                report.unchanged += 1
            report.item_ids.append(item.id)
            for key, (value, rationale) in row.gold.items():
                GoldLabel.objects.update_or_create(
                    item=item, question=questions[key], defaults={"value": value, "rationale": rationale}
                )
                report.gold_labels += 1
        if report.created:
            synced = project_main_items_sync(project.pk)
            report.main_items_added = {stage_id: sync.added for stage_id, sync in synced.items()}
        without_gold = [
            (item_id, row.external_id) for item_id, row in zip(report.item_ids, rows, strict=True) if not row.gold
        ]
        report.left_off_lists = _left_off_lists(project, without_gold)
    return report


def _left_off_lists(project: AnnotationProject, imported: list[tuple[int, str]]) -> list[LeftOffList]:
    """For each stage handing out an explicit item list, the imported items (without gold) it does not name."""
    lists = StageLabelling.objects.filter(stage__project=project, item_rule=StageLabelling.ItemRule.LIST)
    left_off = []
    for settings in lists.select_related("stage").order_by("stage__order"):
        listed = set(settings.item_ids or [])
        missing = [(item_id, external_id) for item_id, external_id in imported if item_id not in listed]
        if missing:
            stage = settings.stage
            left_off.append(
                LeftOffList(
                    stage_id=stage.pk,
                    stage_order=stage.order,
                    stage_name=stage.name,
                    item_ids=tuple(item_id for item_id, _ in missing),
                    external_ids=tuple(external_id for _, external_id in missing),
                )
            )
    return left_off
