"""Readers of the published human-labelled tutor-response files (MRBench V1/V2, BEA 2025), pure.

MRBench V1/V2 (Maurya et al., NAACL 2025) and the BEA 2025 shared-task files built on it are told apart by their keys;
each response is mapped to the judge's rubric by one stated table (`MAPPING`) that the page and the API show as it is.

The schemas, as published: a JSON list of dialogues. Each has ``conversation_id`` and ``conversation_history``
(one string of "Tutor:" / "Student:" lines; a line may read "Turor:"). MRBench adds ``Data`` (MathDial,
Bridge), ``Split``, ``Topic`` (often "Not Available"), ``Ground_Truth_Solution`` (a worked solution, not an
answer) and ``anno_llm_responses``: tutor → ``{"response", "annotation"}`` over eight dimensions (the last
spelled ``humanlikeness`` in V1). The BEA files put the responses under ``tutor_responses`` with four
dimensions (Mistake_Identification, Mistake_Location, Providing_Guidance, Actionability) and no Topic or
solution; their test set carries no annotation. Tutors differ per dialogue (Novice only in some). A
``conversation_id`` may occur in several records (same history, other responses, another ``Split``): such
items are kept apart by record index and Split in their source id, and the reader warns with the count.

Keys are read whatever their case (the README writes ``split``, the files ``Split``), dimension names whatever their
separators; a dimension given no label (null, "" or "Not Available") counts as absent, and so it does when a
response lacks it; an empty tutor entry or a record without responses is left out. Each of these is a warning
with its count; anything else the reader cannot map is an `MRBenchError` naming the record, the tutor and the field.
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from edufair_web.error_quotes import shown as _shown
from edufair_web.json_input import JSONInputError, loads
from edufair_web.rubric_metrics import REGISTRY, UNMAPPED
from edufair_web.storable_text import unstorable_in

MRBENCH, BEA2025 = "mrbench", "bea2025"
RESPONSE_KEYS = {MRBENCH: "anno_llm_responses", BEA2025: "tutor_responses"}
SCHEMA_NAMES = {
    MRBENCH: "MRBench (V1/V2): responses under anno_llm_responses",
    BEA2025: "BEA 2025 shared task: responses under tutor_responses",
}
# Values that stand for "nothing here" in Topic and Ground_Truth_Solution.
PLACEHOLDERS = {"", "not available", "n/a", "na", "none", "null", "-"}
# Misspellings of the speakers found in the published histories.
SPEAKERS = {"tutor": "tutor", "turor": "tutor", "teacher": "tutor", "student": "student"}

YES_SCALE = {"yes": "2", "to some extent": "1", "no": "0"}
TONE_SCALE = {"encouraging": "2", "neutral": "1", "offensive": "0"}
REVEALED_CORRECT = "yes (and the answer is correct)"
REVEALED_INCORRECT = "yes (but the answer is incorrect)"
# The README spells the reveal labels "(and the revealed answer is correct)"; the files drop "revealed".
REVEAL_ALIASES = {
    "yes (and the revealed answer is correct)": REVEALED_CORRECT,
    "yes (but the revealed answer is incorrect)": REVEALED_INCORRECT,
}
REVEAL_SCALE = {REVEALED_CORRECT: "2", "no": "0"}
REVEAL_ALLOWED = (*REVEAL_SCALE, REVEALED_INCORRECT)
MAX_SOURCE_ID = 200  # an item's external id ("conversation id[/record/Split]:tutor")

DIMENSIONS = (
    "Mistake_Identification",
    "Mistake_Location",
    "Revealing_of_the_Answer",
    "Providing_Guidance",
    "Actionability",
    "Coherence",
    "Tutor_Tone",
    "Humanlikeness",
)
NOT_IN_RUBRIC = ("Coherence", "Humanlikeness")
ALLOWED = {
    "Mistake_Identification": tuple(YES_SCALE),
    "Mistake_Location": tuple(YES_SCALE),
    "Revealing_of_the_Answer": REVEAL_ALLOWED,
    "Providing_Guidance": tuple(YES_SCALE),
    "Actionability": tuple(YES_SCALE),
    "Coherence": tuple(YES_SCALE),
    "Tutor_Tone": tuple(TONE_SCALE),
    "Humanlikeness": tuple(YES_SCALE),
}
_CANONICAL_DIMENSION = {name.lower(): name for name in DIMENSIONS}


def dimension_name(key) -> str | None:
    """A dimension's canonical spelling, whatever its case or separators ("humanlikeness", "Tutor Tone",
    "mistake-identification"); None for a key the rubric does not know."""
    return _CANONICAL_DIMENSION.get(re.sub(r"[\s\-]+", "_", str(key).strip()).lower())


# The one statement of how a file's labels become the rubric's values (each metric's record in the metric registry):
# shown on the page and in the API.
MAPPING: list[dict] = [
    {
        "metric": metric.key,
        "dimensions": list(metric.published.dimensions),
        "values": [{"source": source, "value": value} for source, value in metric.published.values],
        "note": metric.published.note,
    }
    for metric in REGISTRY.values()
    if metric.published is not None
]
METRIC_DIMENSIONS = {row["metric"]: row["dimensions"][0] for row in MAPPING}


class MRBenchError(ValueError):
    """The file cannot be imported; the message names the record, the tutor and the field at fault."""


@dataclass
class ImportedResponse:
    external_id: str
    conversation_id: str
    record: int  # 1-based position in the file
    split: str
    data: str
    tutor: str
    topic: str  # "" for a placeholder
    solution: str  # "" for a placeholder
    answer: str  # the final answer when the solution states one on its last line, else ""
    preamble: str  # history text before the first speaker line, if any
    history: list[tuple[str, str]]
    response: str
    labels: dict[str, str]  # rubric metric → value ("0", "1", "2")
    source_labels: dict[str, str] = field(default_factory=dict)  # dimension (canonical spelling) → label
    unmapped: dict[str, str] = field(default_factory=dict)  # metric → the source label left unmapped


@dataclass
class ParsedFile:
    schema: str
    responses: list[ImportedResponse]
    n_records: int
    dimensions: list[str]  # canonical names found in the file, in DIMENSIONS order
    missing_dimensions: list[str]  # of the rubric's source dimensions
    unlabelled_metrics: list[str]  # metrics no response has a value for
    repeated_conversations: dict[str, int]  # conversation id → records
    warnings: list[str]


def _norm(label) -> str:
    return re.sub(r"\s+", " ", str(label if label is not None else "")).strip().lower()


def _key(record: dict, name: str):
    """A record's field by its published name, whatever its case (the README writes ``split``, the files
    ``Split``)."""
    if name in record:
        return record[name]
    lowered = name.lower()
    return next((value for key, value in record.items() if str(key).lower() == lowered), None)


def _text(value) -> str:
    return "" if value is None else str(value).strip()


def _real(value) -> str:
    text = _text(value)
    return "" if _norm(text) in PLACEHOLDERS else text


_FINAL_ANSWER = re.compile(r"^(?:#+\s*)?(-?[\d.,/ ]+%?)$")


def final_answer(solution: str) -> str:
    """The final answer a worked solution states on its own last line ("#### 36" or "36"), else "": a whole
    worked solution is never passed where the judge reads the answer."""
    lines = [line.strip() for line in solution.splitlines() if line.strip()]
    if not lines:
        return ""
    match = _FINAL_ANSWER.match(lines[-1])
    return match.group(1).strip() if match and len(match.group(1)) <= 20 else ""


_SPEAKER = re.compile(r"^\s*([A-Za-z]+)\s*:\s*")


def parse_history(text: str) -> tuple[str, list[tuple[str, str]]]:
    """ "Tutor: …" / "Student: …" lines (also "Turor:", "Teacher:") into (role, text) turns; other lines
    continue the current turn. Returns the text before the first speaker line too (usually "")."""
    preamble: list[str] = []
    turns: list[list[str]] = []
    for line in (text or "").splitlines():
        match = _SPEAKER.match(line)
        role = SPEAKERS.get(match.group(1).lower()) if match else None
        if role is not None:
            turns.append([role, line[match.end() :].strip()])
        elif turns and line.strip():
            turns[-1][1] = f"{turns[-1][1]} {line.strip()}".strip()
        elif line.strip():
            preamble.append(line.strip())
    return " ".join(preamble), [(role, body) for role, body in turns]


def _is_empty_label(label) -> bool:
    """No label given: null, an empty string or a placeholder ("Not Available", "N/A")."""
    return label is None or (isinstance(label, str) and _norm(label) in PLACEHOLDERS)


def _canonical_annotation(annotation: dict, where: str) -> dict[str, str]:
    """Dimension names in their canonical spelling (``humanlikeness`` → Humanlikeness), labels checked.
    A dimension given no label (null, "" or a placeholder) is left out, as if absent (`empty_labels`)."""
    found: dict[str, str] = {}
    for key, label in annotation.items():
        name = dimension_name(key)
        if name is None or _is_empty_label(label):
            continue  # a dimension the rubric does not know is neither mapped nor an error
        if not isinstance(label, str):
            raise MRBenchError(f"{where}, {name}: {_shown(repr(label))} is not a published label (labels are text)")
        value = _norm(label)
        value = REVEAL_ALIASES.get(value, value)
        if value not in ALLOWED[name]:
            allowed = ", ".join(repr(v) for v in ALLOWED[name])
            raise MRBenchError(f"{where}, {name}: {_shown(repr(label))} is not a published label (one of {allowed})")
        if name in found and REVEAL_ALIASES.get(_norm(found[name]), _norm(found[name])) != value:
            raise MRBenchError(
                f"{where}: {name} is given twice, as two spellings of its key, with two labels "
                f"({_shown(repr(found[name]))}, {_shown(repr(label.strip()))}); keep one"
            )
        found[name] = label.strip()
    return found


def empty_labels(annotation: dict) -> list[str]:
    """The known dimensions an annotation names but gives no label (null, "" or a placeholder)."""
    return [name for key, label in annotation.items() if (name := dimension_name(key)) and _is_empty_label(label)]


def map_annotation(annotation: dict, where: str = "annotation") -> tuple[dict[str, str], dict[str, str]]:
    """A response's labels → (rubric metric → value, metric → source label left unmapped), per `MAPPING`.
    Only the metrics whose dimensions the annotation carries get a value."""
    labels = _canonical_annotation(annotation, where)
    norm = {name: REVEAL_ALIASES.get(_norm(v), _norm(v)) for name, v in labels.items()}
    values: dict[str, str] = {}
    unmapped: dict[str, str] = {}
    if "Mistake_Identification" in norm:
        identified = YES_SCALE[norm["Mistake_Identification"]]
        located = YES_SCALE.get(norm.get("Mistake_Location", ""), identified)
        values["mistake_recognize"] = "0" if identified == "0" else "2" if identified == "2" and located == "2" else "1"
    if "Revealing_of_the_Answer" in norm:
        reveal = norm["Revealing_of_the_Answer"]
        if reveal in REVEAL_SCALE:
            values["answer_leakage"] = REVEAL_SCALE[reveal]
        else:
            unmapped["answer_leakage"] = labels["Revealing_of_the_Answer"]
    for metric, dimension, scale in (
        ("step_scaffolded", "Providing_Guidance", YES_SCALE),
        ("actionability", "Actionability", YES_SCALE),
        ("corrective_tone", "Tutor_Tone", TONE_SCALE),
    ):
        if dimension in norm:
            values[metric] = scale[norm[dimension]]
    return values, unmapped


def _schema_of(record: dict, where: str) -> str:
    has = [schema for schema, key in RESPONSE_KEYS.items() if _key(record, key) is not None]
    if len(has) == 1:
        return has[0]
    if len(has) > 1:
        raise MRBenchError(f"{where}: has both anno_llm_responses and tutor_responses; keep one")
    keys = _keys_text(record)
    raise MRBenchError(
        f"{where}: no tutor responses — expected anno_llm_responses (MRBench) or tutor_responses "
        f"(BEA 2025); the record's keys are {keys}"
    )


def _keys_text(record: dict, most: int = 12) -> str:
    keys = sorted(str(k)[:40] for k in record)
    return (", ".join(keys[:most]) + (f" and {len(keys) - most} more" if len(keys) > most else "")) or "none"


def _refuse_repeated_keys(pairs: list[tuple[str, object]]) -> dict:
    seen: dict = {}
    for key, value in pairs:
        if key in seen:
            raise MRBenchError(
                f"a JSON object repeats the key {key[:80]!r}: a JSON reader keeps only the last one, so a "
                "response or label would be lost; give each tutor (and each field) one key"
            )
        seen[key] = value
    return seen


def parse_labelled_file(data: bytes | str) -> ParsedFile:
    """Every tutor response of an MRBench or BEA 2025 file, with its labels mapped, and what the file
    lacks stated. Raises MRBenchError naming the cause."""
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8-sig")  # the files are UTF-8; a byte-order mark is tolerated
        except UnicodeDecodeError as exc:
            raise MRBenchError(f"the file is not UTF-8 text (byte {exc.start} cannot be read)") from None
    try:
        records = loads(data)
    except JSONInputError as exc:
        if "Extra data" in str(exc):  # several JSON values one after the other: JSON Lines, say
            raise MRBenchError(
                f"{exc}: the file holds more than one JSON value (JSON Lines?); the published files are one "
                "JSON list of dialogues"
            ) from None
        raise MRBenchError(str(exc)) from None
    # Checked on a second reading, of text already known to be valid and shallow (json_input has no hook).
    json.loads(data, object_pairs_hook=_refuse_repeated_keys)
    if isinstance(records, dict):
        raise MRBenchError(
            f"the file must hold a JSON list of dialogues; it holds one object (keys: {_keys_text(records)})"
        )
    if not isinstance(records, list):
        raise MRBenchError("the file must hold a JSON list of dialogues")
    if not records:
        raise MRBenchError("the file holds an empty list: no dialogue to import")
    schema = None
    seen_ids: Counter = Counter()
    for index, record in enumerate(records, start=1):
        if not isinstance(record, dict):
            raise MRBenchError(f"record {index}: a dialogue must be an object, not {type(record).__name__}")
        conversation_id = _text(_key(record, "conversation_id"))
        if not conversation_id:
            raise MRBenchError(f"record {index}: conversation_id is missing")
        seen_ids[conversation_id] += 1
        found = _schema_of(record, f"record {index} ({_shown(conversation_id)})")
        if schema is None:
            schema = found
        elif found != schema:
            raise MRBenchError(
                f"record {index} ({_shown(conversation_id)}): uses {RESPONSE_KEYS[found]} while the records before "
                f"it use {RESPONSE_KEYS[schema]}; one file holds one schema"
            )
    repeated = {cid: n for cid, n in seen_ids.items() if n > 1}

    responses: list[ImportedResponse] = []
    dimensions_seen: set[str] = set()
    empty_records: list[int] = []
    empty_entries: list[str] = []
    textless: list[str] = []
    blank_labels: Counter = Counter()
    external_ids: dict[str, str] = {}
    for index, record in enumerate(records, start=1):
        conversation_id = _text(_key(record, "conversation_id"))
        where = f"record {index} ({_shown(conversation_id)})"
        problem = unstorable_in(record)
        if problem:
            raise MRBenchError(f"{where}: contains {problem}, which cannot be stored")
        body = _key(record, RESPONSE_KEYS[schema])
        if not isinstance(body, dict):
            raise MRBenchError(f"{where}: {RESPONSE_KEYS[schema]} must be an object of tutor → response")
        if not body:
            empty_records.append(index)
            continue
        split = _text(_key(record, "Split"))
        preamble, history = parse_history(_text(_key(record, "conversation_history")))
        solution = _real(_key(record, "Ground_Truth_Solution"))
        for tutor, entry in body.items():
            tutor = str(tutor).strip()
            at = f"{where}, tutor {_shown(tutor)}"
            if not tutor:
                raise MRBenchError(f"{where}: a tutor response has an empty tutor name")
            if entry is None or entry == {}:
                empty_entries.append(at)
                continue
            if not isinstance(entry, dict):
                raise MRBenchError(f"{at}: the response must be an object with response and annotation")
            raw_text = _key(entry, "response")
            if isinstance(raw_text, dict | list | bool):
                raise MRBenchError(f"{at}: the response must be text, not {type(raw_text).__name__}")
            text = _text(raw_text)
            annotation = _key(entry, "annotation") or {}
            if not isinstance(annotation, dict):
                raise MRBenchError(f"{at}: annotation must be an object of dimension → label")
            values, unmapped = map_annotation(annotation, at)
            source_labels = _canonical_annotation(annotation, at)
            blank_labels.update(empty_labels(annotation))
            if not text:
                textless.append(at)
            dimensions_seen.update(source_labels)
            source_id = (
                f"{conversation_id}/r{index}" + (f"/{split}" if split else "")
                if conversation_id in repeated
                else conversation_id
            )
            if len(source_id) + len(tutor) + 1 > MAX_SOURCE_ID:
                raise MRBenchError(
                    f"{at}: the conversation id and tutor name are longer than {MAX_SOURCE_ID} characters"
                )
            external_id = f"{source_id}:{tutor}"
            if external_id in external_ids:
                raise MRBenchError(
                    f"{at}: the same tutor as {external_ids[external_id]} (tutor names that differ only in spaces "
                    "around them are one tutor); give each response of a dialogue its own tutor"
                )
            external_ids[external_id] = at
            responses.append(
                ImportedResponse(
                    external_id=external_id,
                    conversation_id=conversation_id,
                    record=index,
                    split=split,
                    data=_text(_key(record, "Data")),
                    tutor=tutor,
                    topic=_real(_key(record, "Topic")),
                    solution=solution,
                    answer=final_answer(solution),
                    preamble=preamble,
                    history=history,
                    response=text,
                    labels=values,
                    source_labels=source_labels,
                    unmapped=unmapped,
                )
            )
    if not any(r.source_labels for r in responses):
        raise MRBenchError(
            f"the file's {len(responses)} responses carry no annotation: nothing to validate a judge against "
            "(the BEA 2025 test set is released without labels)"
        )
    dimensions = [d for d in DIMENSIONS if d in dimensions_seen]
    missing = [d for row in MAPPING for d in row["dimensions"] if d not in dimensions_seen]
    unlabelled = [row["metric"] for row in MAPPING if not any(row["metric"] in r.labels for r in responses)]
    warnings = []
    if repeated:
        ids = ", ".join(sorted(repeated))
        warnings.append(
            f"{len(repeated)} conversation id{'s occur' if len(repeated) > 1 else ' occurs'} in more than one record "
            f"({ids}): their responses are kept apart by record index and Split in the source id"
        )
    for metric in unlabelled:
        dimension = METRIC_DIMENSIONS[metric]
        why = "has no " if dimension in missing else "has no usable "
        warnings.append(
            f"the file {why}{dimension} labels: {metric} has no human label and is left out of the verdicts"
        )
    if "Mistake_Location" in missing and "mistake_recognize" not in unlabelled:
        warnings.append("the file has no Mistake_Location labels: mistake_recognize rests on Mistake_Identification")
    incorrect = sum("answer_leakage" in r.unmapped for r in responses)
    if incorrect:
        warnings.append(
            f"{incorrect} response{'s' if incorrect > 1 else ''} labelled 'Yes (but the answer is incorrect)' "
            f"{'have' if incorrect > 1 else 'has'} no answer_leakage value: the rubric has no level for an incorrect "
            "answer revealed"
        )
    annotated = [r for r in responses if r.source_labels]
    for dimension in dimensions:
        lacking = sum(dimension not in r.source_labels for r in annotated)
        if lacking:
            warnings.append(
                f"{lacking} of the {len(annotated)} annotated responses {'carry' if lacking > 1 else 'carries'} no "
                f"{dimension} label: "
                "no value from it for them"
            )
    if blank_labels:
        listed = ", ".join(f"{d} {n}" for d, n in sorted(blank_labels.items()))
        warnings.append(f'some labels are empty (null, "" or "Not Available": {listed}): read as not given')
    if textless:
        warnings.append(
            f"{len(textless)} response{'s have' if len(textless) > 1 else ' has'} no text ({textless[0]}"
            f"{' and more' if len(textless) > 1 else ''}): imported as an empty tutor turn"
        )
    if empty_entries:
        warnings.append(
            f"{len(empty_entries)} tutor entr{'ies are' if len(empty_entries) > 1 else 'y is'} empty "
            f"({empty_entries[0]}{' and more' if len(empty_entries) > 1 else ''}): no response to import, left out"
        )
    if empty_records:
        warnings.append(
            f"{len(empty_records)} record{'s have' if len(empty_records) > 1 else ' has'} no tutor response "
            f"(record {', '.join(map(str, empty_records[:10]))}{' …' if len(empty_records) > 10 else ''}): left out"
        )
    no_labels = sum(not r.source_labels for r in responses)
    if no_labels:
        warnings.append(
            f"{no_labels} response{'s carry' if no_labels > 1 else ' carries'} no annotation: imported unlabelled"
        )
    return ParsedFile(
        schema=schema,
        responses=responses,
        n_records=len(records),
        dimensions=dimensions,
        missing_dimensions=missing,
        unlabelled_metrics=unlabelled,
        repeated_conversations=repeated,
        warnings=warnings,
    )


def label_counts(responses) -> dict:
    """Counts of the file's labels as stored: per dimension (label → n), per tutor (responses and, per
    dimension, label → n), and per rubric metric (value → n, with the unmapped labels apart). ``responses``
    are ImportedResponse objects or dicts with tutor / source_labels / labels / unmapped."""
    by_dimension: dict[str, Counter] = defaultdict(Counter)
    by_tutor: dict[str, dict] = {}
    by_metric: dict[str, Counter] = defaultdict(Counter)
    for r in responses:
        get = r.get if isinstance(r, dict) else lambda name, default=None, r=r: getattr(r, name, default)
        tutor = get("tutor", "")
        row = by_tutor.setdefault(tutor, {"responses": 0, "dimensions": defaultdict(Counter)})
        row["responses"] += 1
        for dimension, label in (get("source_labels") or {}).items():
            by_dimension[dimension][label] += 1
            row["dimensions"][dimension][label] += 1
        for metric, value in (get("labels") or {}).items():
            by_metric[metric][str(value)] += 1
        for metric in get("unmapped") or {}:
            by_metric[metric][UNMAPPED] += 1
    order = {d: i for i, d in enumerate(DIMENSIONS)}
    return {
        "dimensions": {d: dict(sorted(c.items())) for d, c in sorted(by_dimension.items(), key=lambda x: order[x[0]])},
        "tutors": {
            t: {
                "responses": row["responses"],
                "dimensions": {d: dict(sorted(c.items())) for d, c in row["dimensions"].items()},
            }
            for t, row in sorted(by_tutor.items())
        },
        "metrics": {m: dict(sorted(c.items())) for m, c in by_metric.items()},
    }
