"""Reading a Label Studio project export into plain records checked against a project's questions (pure).

The export is Label Studio's JSON format (a list of tasks with ``data`` and ``annotations``); every region is checked
against the target project's questions, with no database. Everything that cannot be mapped is an error naming the task
and the annotation; what is left out on purpose (cancelled annotations, predictions, tasks without annotations) is a
warning.

A file of bare task data (no ``data`` key: Label Studio's JSON-MIN export, or a file flattened by hand)
is refused: its labels would otherwise be lost without a word.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from edufair_web.error_quotes import shown as _shown
from edufair_web.storable_text import unstorable_in

from .config import UNSURE, ChoiceQuestion, ConfigNames, config_names
from .provenance import ProvenanceInvalid, provenance_parse

PHASES = ("pilot", "qualification", "main")
ROUNDS = ("pre", "post")
METHODS = ("unanimous", "majority", "discussion", "senior")
MAX_ERRORS = 50
# The item fields' sizes (annotation.models.Item): longer values are refused here, not by the database.
MAX_LENGTHS = {"external_id": 200, "subject": 100, "category": 200}


@dataclass(frozen=True)
class ReadAnswer:
    value: str  # "" when unsure
    unsure: bool = False
    justification: str = ""


@dataclass
class ReadAnnotation:
    where: str
    kind: str  # label | gold | adjudication
    identity: str | None  # who, as Label Studio named them (e-mail or user id); None for gold and adjudication
    stage: int | None
    phase: str
    round: str
    method: str
    seconds: float
    labelled_at: datetime | None
    answers: dict[str, ReadAnswer] = field(default_factory=dict)


@dataclass
class ReadTask:
    where: str
    external_id: str
    payload: dict
    subject: str
    category: str
    modality: str
    task_id: object
    annotations: list[ReadAnnotation] = field(default_factory=list)


@dataclass
class ReadResult:
    tasks: Sequence[ReadTask]  # ReadTasks: read again from the file at each pass
    errors: list[str]
    warnings: list[str]


def annotator_identity(completed_by) -> str | None:
    """Label Studio names an annotator by id (its own export) or by e-mail (``{"email": …}``, or a string)."""
    if isinstance(completed_by, bool):
        return None
    if isinstance(completed_by, int):
        return f"label-studio-user:{completed_by}"
    if isinstance(completed_by, dict):
        if completed_by.get("email"):
            return str(completed_by["email"]).strip().lower()
        if isinstance(completed_by.get("id"), int):
            return f"label-studio-user:{completed_by['id']}"
        return None
    if isinstance(completed_by, str) and completed_by.strip():
        return completed_by.strip().lower()
    return None


def annotator_username(identity: str) -> str:
    """The pseudonymous EduFair user name of an imported annotator (no e-mail or id is kept)."""
    return "ls-" + hashlib.sha256(identity.encode()).hexdigest()[:12]


def _payload(data: dict) -> dict | None:
    own = data.get("payload")
    if isinstance(own, dict) and (isinstance(own.get("text"), str) or isinstance(own.get("turns"), list)):
        turns = own.get("turns")
        if turns is None or all(isinstance(t, dict) and isinstance(t.get("text"), str) for t in turns):
            return own
    if isinstance(data.get("text"), str) and data["text"]:
        return {"text": data["text"]}
    dialogue = data.get("dialogue")
    if isinstance(dialogue, list) and dialogue and all(isinstance(t, dict) for t in dialogue):
        return {
            "turns": [
                {"role": str(t.get("author") or t.get("role") or ""), "text": str(t.get("text", ""))} for t in dialogue
            ]
        }
    return None


def _time(text) -> datetime | None:
    try:
        return datetime.fromisoformat(str(text))
    except ValueError:
        return None


def _annotation(
    raw: dict, where: str, questions: dict[str, ChoiceQuestion], names: ConfigNames, errors: list[str]
) -> ReadAnnotation | None:
    result = raw.get("result")
    if not isinstance(result, list):
        errors.append(f"{where}: 'result' must be a list of regions")
        return None
    provenance: dict[str, str] = {}
    justified = {name: key for key, name in names.justifications.items()}
    choices: dict[str, str] = {}
    justifications: dict[str, str] = {}
    for number, region in enumerate(result, start=1):
        at = f"{where}, region {number}"
        if not isinstance(region, dict):
            errors.append(f"{at}: not an object")
            continue
        name, kind, value = region.get("from_name"), region.get("type"), region.get("value") or {}
        if not isinstance(name, str):
            errors.append(f"{at}: from_name must be the name of a tag, not {_shown(repr(name))}")
            continue
        if kind == "choices":
            if name not in questions:
                errors.append(f"{at}: no question with key {_shown(repr(name))} in the project")
                continue
            picked = value.get("choices") if isinstance(value, dict) else None
            if not isinstance(picked, list) or len(picked) != 1:
                errors.append(f"{at}: {name!r} needs exactly one choice, got {_shown(repr(picked))}")
                continue
            if name in choices:
                errors.append(f"{at}: {name!r} is answered twice")
                continue
            if str(picked[0]) not in questions[name].values:
                errors.append(
                    f"{at}: {_shown(repr(picked[0]))} is not a value of {name!r} ({', '.join(questions[name].values)})"
                )
                continue
            choices[name] = str(picked[0])
        elif kind == "textarea":
            texts = value.get("text") if isinstance(value, dict) else None
            text = "\n".join(str(t) for t in texts) if isinstance(texts, list) else None
            if text is None:
                errors.append(f"{at}: a textarea region needs value.text as a list")
            elif name == names.provenance:
                try:
                    provenance = provenance_parse(text)
                except ProvenanceInvalid as exc:
                    errors.append(f"{at}: provenance: {exc}")
            elif name in justified:
                justifications[justified[name]] = text
            else:
                errors.append(f"{at}: the text area {_shown(repr(name))} is neither a justification nor the provenance")
        else:
            errors.append(
                f"{at}: a {_shown(repr(kind))} region ({_shown(repr(name))}) cannot be mapped to a question "
                "(only choices)"
            )
    for key in justifications:
        if key not in choices:
            errors.append(f"{where}: a justification for {key!r} without an answer to it")
    kind = provenance.get("kind", "label")
    identity = annotator_identity(raw.get("completed_by")) if kind == "label" else None
    if kind == "label" and identity is None:
        errors.append(f"{where}: completed_by is missing or not an e-mail or user id, so the annotator is unknown")
    phase, round_, method = (
        provenance.get("phase", "main"),
        provenance.get("round", "pre"),
        provenance.get("method", ""),
    )
    if phase not in PHASES:
        errors.append(f"{where}: phase {_shown(repr(phase))} is not one of {', '.join(PHASES)}")
    if round_ not in ROUNDS:
        errors.append(f"{where}: round {_shown(repr(round_))} is not one of {', '.join(ROUNDS)}")
    if kind == "adjudication" and method not in METHODS:
        errors.append(f"{where}: method {_shown(repr(method))} is not one of {', '.join(METHODS)}")
    if kind != "label" and UNSURE in choices.values():
        errors.append(f"{where}: a {kind} answer cannot be {UNSURE!r}")
    labelled_at = None
    if provenance.get("labelled_at"):
        labelled_at = _time(provenance["labelled_at"])
        if labelled_at is None:
            errors.append(f"{where}: labelled_at {_shown(repr(provenance['labelled_at']))} is not an ISO time")
    try:
        seconds = max(float(raw.get("lead_time") or 0), 0.0)
    except (TypeError, ValueError):
        errors.append(f"{where}: lead_time {_shown(repr(raw.get('lead_time')))} is not a number of seconds")
        seconds = 0.0
    answers = {
        key: ReadAnswer(
            value="" if value == UNSURE else value, unsure=value == UNSURE, justification=justifications.get(key, "")
        )
        for key, value in choices.items()
    }
    return ReadAnnotation(
        where=where,
        kind=kind,
        identity=identity,
        stage=int(provenance["stage"]) if provenance.get("stage") else None,
        phase=phase,
        round=round_,
        method=method,
        seconds=seconds,
        labelled_at=labelled_at,
        answers=answers,
    )


@dataclass
class _Tally:
    """What the warnings and the last check count over the whole file."""

    cancelled: int = 0
    predictions: int = 0
    without: int = 0  # tasks without an answered annotation
    answered: bool = False  # some task carries an annotation with an answer


def _task(
    raw,
    index: int,
    questions: dict[str, ChoiceQuestion],
    names: ConfigNames,
    errors: list[str],
    tally: _Tally,
    seen: dict[str, str] | None,
) -> ReadTask | None:
    """Task `index` of the file, or None when it cannot be read at all (`errors` says why). `seen` holds the external
    ids of the tasks read before it, and where they are; None when the file is known to repeat none."""
    if not isinstance(raw, dict):
        errors.append(f"task {index}: not an object")
        return None
    where = f"task {index} (id {_shown(raw.get('id'))})"
    problem = unstorable_in(raw)
    if problem:
        errors.append(f"{where}: contains {problem}, which cannot be stored")
        return None
    if not isinstance(raw.get("data"), dict):
        errors.append(
            f"{where}: no 'data' object — this looks like a flattened file (Label Studio's JSON-MIN export, "
            "or one edited by hand), whose labels cannot be read as Label Studio stores them; export the "
            "project from Label Studio as JSON"
        )
        return None
    task_data = raw["data"]
    payload = _payload(task_data)
    if payload is None:
        errors.append(f"{where}: data has no text, dialogue or payload to make an item from")
        return None
    external_id = str(task_data.get("external_id") or f"label-studio-{raw.get('id', index)}").strip()
    fields = {
        "external_id": external_id,
        "subject": str(task_data.get("subject") or ""),
        "category": str(task_data.get("category") or ""),
    }
    too_long = [
        f"{name} ({len(value)} characters, at most {MAX_LENGTHS[name]})"
        for name, value in fields.items()
        if len(value) > MAX_LENGTHS[name]
    ]
    if too_long:
        errors.append(f"{where}: too long: {', '.join(too_long)}")
        return None
    if seen is not None:
        if external_id in seen:
            errors.append(f"{where}: item {_shown(repr(external_id))} already comes from {seen[external_id]}")
            return None
        seen[external_id] = where
    turns = payload.get("turns") or []
    task = ReadTask(
        where=where,
        external_id=external_id,
        payload=payload,
        subject=str(task_data.get("subject") or ""),
        category=str(task_data.get("category") or ""),
        modality=str(task_data.get("modality") or ("multi" if len(turns) > 2 else "single")),
        task_id=raw.get("id"),
    )
    if task.modality not in ("single", "multi"):
        errors.append(f"{where}: modality {_shown(repr(task.modality))} is not single or multi")
    annotations = raw.get("annotations")
    if annotations is None:
        annotations = []
    if not isinstance(annotations, list):
        errors.append(f"{where}: 'annotations' must be a list")
        return None
    if raw.get("predictions"):
        tally.predictions += len(raw["predictions"]) if isinstance(raw["predictions"], list) else 1
    for number, annotation in enumerate(annotations, start=1):
        shown_id = _shown(annotation.get("id") if isinstance(annotation, dict) else None)
        at = f"{where}, annotation {number} (id {shown_id})"
        if not isinstance(annotation, dict):
            errors.append(f"{at}: not an object")
            continue
        if annotation.get("was_cancelled"):
            tally.cancelled += 1
            continue
        read = _annotation(annotation, at, questions, names, errors)
        if read is not None and read.answers:
            task.annotations.append(read)
    if task.annotations:
        tally.answered = True
    else:
        tally.without += 1
    return task


class ReadTasks(Sequence):
    """The tasks of a file read without an error, each read again from the file when it is reached (and again at every
    pass): the import goes over them three times (check, match, write) holding one at a time, where a list of every
    task's records beside the file's decoded JSON took several times the file's size."""

    def __init__(self, data: Sequence, questions: dict[str, ChoiceQuestion], names: ConfigNames):
        self._data, self._questions, self._names = data, questions, names

    def __len__(self) -> int:
        return len(self._data)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        return self._read(self._data[index], index + 1)

    def __iter__(self) -> Iterator[ReadTask]:
        for index, raw in enumerate(self._data, start=1):
            yield self._read(raw, index)

    def _read(self, raw, index: int) -> ReadTask:
        errors: list[str] = []
        task = _task(raw, index, self._questions, self._names, errors, _Tally(), seen=None)
        if task is None or errors:  # the same task read the same way: the file was read without an error before
            raise RuntimeError(f"task {index} no longer reads as it did: {errors}")
        return task


def read_label_studio_export(data, questions: dict[str, ChoiceQuestion]) -> ReadResult:
    """Check the whole file against the questions; errors and warnings in words, tasks as plain records (read again
    from `data` at each pass, so `data` must not change; none when there are errors). `data` is the decoded file: a
    list, or a JSONArray (edufair_web.json_input.loads_array), which decodes one task at a time."""
    errors: list[str] = []
    warnings: list[str] = []
    if not isinstance(data, Sequence) or isinstance(data, str):
        return ReadResult([], ["a Label Studio export is a JSON list of tasks"], [])
    if not data:
        return ReadResult([], ["the file has no tasks"], [])
    names = config_names(questions)
    seen: dict[str, str] = {}
    tally = _Tally()
    for index, raw in enumerate(data, start=1):
        if len(errors) >= MAX_ERRORS:
            break
        _task(raw, index, questions, names, errors, tally, seen)
    del seen
    if not errors and not tally.answered:
        errors.append(
            "no task carries an annotation with an answer: nothing would be imported as labels (a file of tasks "
            "only, or one whose annotations were flattened away); export the project from Label Studio as JSON"
        )
    if tally.cancelled:
        warnings.append(f"{tally.cancelled} cancelled (skipped) annotation(s) left out")
    if tally.predictions:
        warnings.append(f"{tally.predictions} prediction(s) left out: predictions are not labels")
    if tally.without and not errors:
        warnings.append(f"{tally.without} task(s) without an answered annotation: imported as items only")
    tasks = ReadTasks(data, questions, names) if not errors else []
    return ReadResult(tasks, errors, warnings)
