"""Reading a Label Studio project export into plain records checked against a project's questions (pure).

The export is Label Studio's JSON format (a list of tasks with ``data`` and ``annotations``); every region is checked
against the target project's questions, with no database. Everything that cannot be mapped is an error naming the task
and the annotation; what is left out on purpose (cancelled annotations, drafts, annotations without an answer,
predictions, tasks without annotations) is counted in a warning.

Who labelled: the ``annotator`` the provenance names (EduFair's anonymous export), else Label Studio's
``completed_by``: an e-mail where it gives one (``{"email": …}`` or a string), else its user number, which is
only unique within one Label Studio instance, so it is read as (instance, number) with the instance the import is
given (none: one unnamed instance, as before; a warning says so).

A task exported from EduFair keeps the item's own payload beside the text Label Studio shows (`ReadTask.shown`);
`edited_text` says what differs between the two, in short, when the shown text was edited in Label Studio.

A file of bare task data (Label Studio's JSON-MIN export) is refused once, by `formats`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from edufair_web.error_quotes import shown as _shown
from edufair_web.storable_text import unstorable_in

from .config import DIALOGUE, TEXT, UNSURE, ChoiceQuestion, ConfigNames, config_names
from .config import task_data as rendered
from .formats import json_min_export
from .provenance import ProvenanceInvalid, provenance_parse

PHASES = ("pilot", "qualification", "main")
ROUNDS = ("pre", "post")
METHODS = ("unanimous", "majority", "discussion", "senior")
MAX_ERRORS = 50
# The item fields' sizes (annotation.models.Item): longer values are refused here, not by the database.
MAX_LENGTHS = {"external_id": 200, "subject": 100, "category": 200}
USER_NUMBER = "label-studio-user:"
ANONYMOUS = "edufair-anonymous:"
SHOWN_EDIT = 40  # characters of each side of an edited text shown


@dataclass(frozen=True)
class ReadAnswer:
    value: str  # "" when unsure
    unsure: bool = False
    justification: str = ""


@dataclass
class ReadAnnotation:
    where: str
    kind: str  # label | gold | adjudication
    identity: str | None  # who: the provenance's annotator, else Label Studio's e-mail or (instance, user number)
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
    shown: dict = field(default_factory=dict)  # the text Label Studio showed: data's ``text`` or ``dialogue``
    own_payload: bool = False  # the payload is EduFair's own (``data.payload``), not made from what was shown


@dataclass
class ReadResult:
    tasks: Sequence[ReadTask]  # ReadTasks: read again from the file at each pass
    errors: list[str]
    warnings: list[str]


def user_number_identity(number: int, instance: str = "") -> str:
    """A Label Studio user named by number: ``label-studio-user:<n>`` in the unnamed instance (the identity imports
    have always used), ``label-studio-user:<instance>:<n>`` in a named one, so that two instances' user 3 are two."""
    return f"{USER_NUMBER}{instance.strip().lower()}:{number}" if instance.strip() else f"{USER_NUMBER}{number}"


def annotator_identity(completed_by, instance: str = "") -> str | None:
    """Label Studio names an annotator by e-mail (``{"email": …}`` as its export with users expanded gives, or a
    string) or by user number (its plain export), which is taken in `instance` (`user_number_identity`)."""
    if isinstance(completed_by, bool):
        return None
    if isinstance(completed_by, int):
        return user_number_identity(completed_by, instance)
    if isinstance(completed_by, dict):
        if completed_by.get("email"):
            return str(completed_by["email"]).strip().lower()
        if isinstance(completed_by.get("id"), int) and not isinstance(completed_by["id"], bool):
            return user_number_identity(completed_by["id"], instance)
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


def _difference(before: str, after: str) -> str:
    """The two texts from a little before where they first differ, each cut to SHOWN_EDIT characters."""
    common = 0
    while common < min(len(before), len(after)) and before[common] == after[common]:
        common += 1
    start = 0
    if common > 20:  # from the word before the difference
        start = before.rfind(" ", 0, common - 1) + 1

    def cut(text: str) -> str:
        part = text[start : start + SHOWN_EDIT]
        return ("…" if start else "") + part + ("…" if start + SHOWN_EDIT < len(text) else "")

    return f"{cut(before)!r} became {cut(after)!r}"


def edited_text(data: dict, payload: dict) -> str | None:
    """What differs between the text Label Studio shows (``data.text`` or ``data.dialogue``, as in `ReadTask.shown`)
    and what an item's payload renders to (`config.task_data`), as ``field: 'before' became 'after'``; None when
    nothing does, or when the task shows neither field (nothing to compare)."""
    if isinstance(data.get("dialogue"), list):
        expected, shown_turns = rendered(payload, DIALOGUE)["dialogue"], data["dialogue"]
        if len(shown_turns) != len(expected):
            return f"data.dialogue has {len(shown_turns)} turn(s) where EduFair's item has {len(expected)}"
        for number, (was, now) in enumerate(zip(expected, shown_turns, strict=True)):
            now = now if isinstance(now, dict) else {}
            shown_turn = {"author": str(now.get("author") or now.get("role") or ""), "text": str(now.get("text", ""))}
            for key in ("author", "text"):
                if shown_turn[key] != was[key]:
                    return f"data.dialogue[{number}].{key}: {_difference(was[key], shown_turn[key])}"
        return None
    if "text" in data:
        expected, now = rendered(payload, TEXT)["text"], str(data["text"] or "")
        return None if now == expected else f"data.text: {_difference(expected, now)}"
    return None


def _time(text) -> datetime | None:
    try:
        return datetime.fromisoformat(str(text))
    except ValueError:
        return None


def _annotation(
    raw: dict,
    where: str,
    questions: dict[str, ChoiceQuestion],
    names: ConfigNames,
    errors: list[str],
    instance: str = "",
    numbers: set | None = None,
) -> ReadAnnotation | None:
    """One annotation; `numbers` collects the Label Studio user numbers taken as who labelled (for the warning)."""
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
    identity = None
    if kind == "label" and provenance.get("annotator"):
        identity = ANONYMOUS + provenance["annotator"]
    elif kind == "label":
        identity = annotator_identity(raw.get("completed_by"), instance)
        if identity is None:
            errors.append(f"{where}: completed_by is missing or not an e-mail or user id, so the annotator is unknown")
        elif identity.startswith(USER_NUMBER) and numbers is not None and choices:
            numbers.add(identity.rsplit(":", 1)[1])
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
    drafts: int = 0
    unanswered: int = 0  # annotations, not cancelled, without a choice (Label Studio's empty ``result: []`` among them)
    predictions: int = 0
    without: int = 0  # tasks without an answered annotation
    answered: bool = False  # some task carries an annotation with an answer
    numbers: set = field(default_factory=set)  # Label Studio user numbers that name who labelled


def _task(
    raw,
    index: int,
    questions: dict[str, ChoiceQuestion],
    names: ConfigNames,
    errors: list[str],
    tally: _Tally,
    seen: dict[str, str] | None,
    instance: str = "",
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
        shown={key: task_data[key] for key in ("text", "dialogue") if key in task_data},
        own_payload=payload is task_data.get("payload"),
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
    if raw.get("drafts"):  # ids, or whole drafts: a draft is work saved but not submitted
        tally.drafts += len(raw["drafts"]) if isinstance(raw["drafts"], list) else 1
    for number, annotation in enumerate(annotations, start=1):
        shown_id = _shown(annotation.get("id") if isinstance(annotation, dict) else None)
        at = f"{where}, annotation {number} (id {shown_id})"
        if not isinstance(annotation, dict):
            errors.append(f"{at}: not an object")
            continue
        if annotation.get("was_cancelled"):
            tally.cancelled += 1
            continue
        read = _annotation(annotation, at, questions, names, errors, instance, tally.numbers)
        if read is not None and read.answers:
            task.annotations.append(read)
        elif read is not None:
            tally.unanswered += 1
    if task.annotations:
        tally.answered = True
    else:
        tally.without += 1
    return task


class ReadTasks(Sequence):
    """The tasks of a file read without an error, each read again from the file when it is reached (and again at every
    pass): the import goes over them three times (check, match, write) holding one at a time, where a list of every
    task's records beside the file's decoded JSON took several times the file's size."""

    def __init__(self, data: Sequence, questions: dict[str, ChoiceQuestion], names: ConfigNames, instance: str = ""):
        self._data, self._questions, self._names, self._instance = data, questions, names, instance

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
        task = _task(raw, index, self._questions, self._names, errors, _Tally(), seen=None, instance=self._instance)
        if task is None or errors:  # the same task read the same way: the file was read without an error before
            raise RuntimeError(f"task {index} no longer reads as it did: {errors}")
        return task


def read_label_studio_export(data, questions: dict[str, ChoiceQuestion], instance: str = "") -> ReadResult:
    """Check the whole file against the questions; errors and warnings in words, tasks as plain records (read again
    from `data` at each pass, so `data` must not change; none when there are errors). `data` is the decoded file: a
    list, or a JSONArray (edufair_web.json_input.loads_array), which decodes one task at a time. `instance` names
    the Label Studio instance whose user numbers the file uses ("" for the unnamed one)."""
    errors: list[str] = []
    warnings: list[str] = []
    if not isinstance(data, Sequence) or isinstance(data, str):
        return ReadResult([], ["a Label Studio export is a JSON list of tasks"], [])
    if not data:
        return ReadResult([], ["the file has no tasks"], [])
    flattened = json_min_export(data[0])
    if flattened:
        return ReadResult([], [flattened], [])
    names = config_names(questions)
    seen: dict[str, str] = {}
    tally = _Tally()
    for index, raw in enumerate(data, start=1):
        if len(errors) >= MAX_ERRORS:
            break
        _task(raw, index, questions, names, errors, tally, seen, instance)
    del seen
    if not errors and not tally.answered:
        errors.append(
            "no task carries an annotation with an answer: nothing would be imported as labels (a file of tasks "
            "only, or one whose annotations were flattened away); export the project from Label Studio as JSON"
        )
    if tally.cancelled:
        warnings.append(f"{tally.cancelled} cancelled (skipped) annotation(s) left out")
    if tally.drafts:
        warnings.append(
            f"{tally.drafts} draft(s) left out: a draft is not a submitted annotation (submit it in Label Studio and "
            "export again to import it)"
        )
    if tally.unanswered:
        warnings.append(f"{tally.unanswered} annotation(s) without an answer (an empty result) left out")
    if tally.numbers and not instance.strip():
        numbers = sorted(tally.numbers, key=int)
        listed = ", ".join(numbers[:10]) + (f" and {len(numbers) - 10} more" if len(numbers) > 10 else "")
        warnings.append(
            f"{len(numbers)} annotator(s) are named by Label Studio user number only ({listed}), with no e-mail: they "
            "are taken as users of one unnamed Label Studio instance, the same people as these numbers in earlier "
            "imports without an instance; when a project takes exports from more than one Label Studio, give each "
            "its instance name so that their users are not merged"
        )
    if tally.predictions:
        warnings.append(f"{tally.predictions} prediction(s) left out: predictions are not labels")
    if tally.without and not errors:
        warnings.append(f"{tally.without} task(s) without an answered annotation: imported as items only")
    tasks = ReadTasks(data, questions, names, instance) if not errors else []
    return ReadResult(tasks, errors, warnings)
