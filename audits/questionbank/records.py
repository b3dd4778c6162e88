"""Plain data shared by the importers: a parsed question, a funnel step, the one import error, field checks.

Pure: no Django. Every importer turns a file into `QuestionData` items and a funnel; anything wrong with
the file raises `ImportFileError` naming where (record, line or row) and which field.
"""

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any

from edufair_web.storable_text import unstorable, unstorable_in

# Progress reports: phase name, units done, units in total (bytes while reading).
ProgressCallback = Any  # Callable[[str, int, int], None]; kept loose so tqdm and the DB hook both fit


def no_progress(phase: str, done: int, total: int) -> None:
    """The default progress callback: report nothing."""


class ImportFileError(ValueError):
    """The file cannot be imported; nothing from it is written. Names the record/line and field."""

    def __init__(self, message: str, *, location: str | None = None, field_name: str | None = None):
        self.location = location
        self.field_name = field_name
        self.detail = message
        where = ", ".join(part for part in (location, f"field '{field_name}'" if field_name else None) if part)
        super().__init__(f"{where}: {message}" if where else message)


@dataclass
class QuestionData:
    """One question as an importer produced it, before it meets the database."""

    domain: str
    source: str
    source_id: str
    text: str
    answer: str
    solution: str = ""
    choices: list[str] = field(default_factory=list)
    support: str = ""
    classifier_confidence: float | None = None
    reference_dialogue: list[dict] = field(default_factory=list)
    metadata: dict = field(default_factory=dict)

    @property
    def content_hash(self) -> str:
        return content_hash(self.text, self.answer)


@dataclass
class FunnelStep:
    step: str
    count: int
    detail: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        return {"step": self.step, "count": self.count, "detail": self.detail}


def normalise_text(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().lower()


def content_hash(text: str, answer: str) -> str:
    """Identity of a question by content, so an item without an id is still found again on re-import."""
    return hashlib.sha256(f"{normalise_text(text)}\n{normalise_text(answer)}".encode()).hexdigest()


def require_object(value: Any, *, location: str) -> dict:
    if not isinstance(value, dict):
        raise ImportFileError(f"expected a JSON object, found {type_name(value)}", location=location)
    return value


# Longer than any question, answer, support paragraph or worked solution of the supported datasets (their
# longest are a few thousand characters); a field beyond it is a broken or hostile file, not a question.
MAX_TEXT_CHARS = 100_000


def require_text(record: dict, name: str, *, location: str, allow_empty: bool = False) -> str:
    if name not in record or record[name] is None:
        raise ImportFileError("missing", location=location, field_name=name)
    value = record[name]
    if not isinstance(value, str):
        raise ImportFileError(f"expected text, found {type_name(value)}", location=location, field_name=name)
    if len(value) > MAX_TEXT_CHARS:
        raise ImportFileError(
            f"too long ({len(value):,} characters; the limit is {MAX_TEXT_CHARS:,})", location=location, field_name=name
        )
    if not allow_empty and not value.strip():
        raise ImportFileError("must not be empty", location=location, field_name=name)
    problem = unstorable(value)
    if problem:
        raise ImportFileError(f"contains {problem}", location=location, field_name=name)
    return value


def reject_nul(record: dict, *, location: str) -> None:
    """Refuse a NUL character or a lone surrogate anywhere in a record, naming the top-level field that holds it.

    No database here stores them (edufair_web.storable_text), and no question needs them.
    """
    for name, value in record.items():
        problem = unstorable_in(name) or unstorable_in(value)
        if problem:
            raise ImportFileError(f"contains {problem}", location=location, field_name=str(name))


def optional_text(record: dict, name: str, *, location: str) -> str:
    if record.get(name) is None:
        return ""
    return require_text(record, name, location=location, allow_empty=True)


def require_answer(record: dict, name: str, *, location: str) -> str:
    """Answers may be written as text or as a number; numbers are kept as their JSON spelling."""
    value = record.get(name)
    if isinstance(value, bool):
        raise ImportFileError("expected text or a number, found a boolean", location=location, field_name=name)
    if isinstance(value, int | float):
        return repr(value) if isinstance(value, float) else str(value)
    return require_text(record, name, location=location)


def type_name(value: Any) -> str:
    names = {dict: "an object", list: "a list", str: "text", bool: "a boolean", int: "a number", float: "a number"}
    if value is None:
        return "null"
    return names.get(type(value), type(value).__name__)


@dataclass
class ImportScan:
    """What an importer found after validating the whole file: the funnel and the questions to keep.

    `questions` is a function so an importer may re-read the file instead of holding every kept item.
    """

    funnel: list[FunnelStep]
    kept_count: int
    questions: Any  # Callable[[], Iterable[QuestionData]]
    parameters: dict = field(default_factory=dict)
