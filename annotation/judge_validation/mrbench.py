"""Import MRBench-style files: tutor responses with human labels on Maurya et al.'s (NAACL 2025) dimensions,
mapped to the judge's rubric, so a judge can be validated against an already-labelled public set without
new annotation. The source's label becomes the consensus (a gold label per item and metric); there is no
human–human α to report, and the report says so.

The file: a JSON list of dialogues, each with ``conversation_id``, ``conversation_history`` (lines starting
"Tutor:" / "Student:"), ``Ground_Truth_Solution``, optionally ``Topic``, and the responses under
``anno_llm_responses`` (or ``responses``): tutor name → ``{"response": text, "annotation": {dimension: label}}``.

Mapping (DOMAIN.md "The judge's rubric"): Yes / To some extent / No → 2 / 1 / 0;
mistake_recognize merges Mistake_Identification and Mistake_Location (identified and located → 2,
identified only or "to some extent" → 1, not identified → 0); answer_leakage from Revealing_of_the_Answer
("Yes (and the answer is correct)" → 2, "Yes (but the answer is incorrect)" → 1 — an answer was given, but
not the final one —, "No" → 0); step_scaffolded from Providing_Guidance; actionability from Actionability;
corrective_tone from Tutor_Tone (Encouraging / Neutral / Offensive → 2 / 1 / 0). Coherence and
human-likeness are not in the rubric and are ignored. A label outside these is an error naming the record.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from django.db import transaction

YES_SCALE = {"yes": 2, "to some extent": 1, "no": 0}
TONE_SCALE = {"encouraging": 2, "neutral": 1, "offensive": 0}
REVEAL_SCALE = {"yes (and the answer is correct)": 2, "yes (but the answer is incorrect)": 1, "no": 0}
RESPONSE_KEYS = ("anno_llm_responses", "responses")
SOURCE = "mrbench"


class MRBenchError(ValueError):
    """The file cannot be imported; the message names the record and the field."""


@dataclass
class ImportedResponse:
    external_id: str
    conversation_id: str
    tutor: str
    topic: str
    solution: str
    history: list[tuple[str, str]]
    response: str
    labels: dict[str, int]  # rubric metric → value
    source_labels: dict[str, str] = field(default_factory=dict)


def _norm(label) -> str:
    return re.sub(r"\s+", " ", str(label or "")).strip().lower()


def _scaled(scale: dict[str, int], label, where: str) -> int:
    key = _norm(label)
    if key not in scale:
        raise MRBenchError(f"{where}: {label!r} is not one of {', '.join(repr(k) for k in scale)}")
    return scale[key]


def map_annotation(annotation: dict, where: str) -> dict[str, int]:
    """Maurya-style labels → the rubric's five metrics (only the metrics the annotation covers)."""
    labels: dict[str, int] = {}
    if "Mistake_Identification" in annotation:
        identified = _scaled(YES_SCALE, annotation["Mistake_Identification"], f"{where} Mistake_Identification")
        located = (
            _scaled(YES_SCALE, annotation["Mistake_Location"], f"{where} Mistake_Location")
            if "Mistake_Location" in annotation
            else identified
        )
        labels["mistake_recognize"] = 0 if identified == 0 else 2 if identified == 2 and located == 2 else 1
    if "Revealing_of_the_Answer" in annotation:
        labels["answer_leakage"] = _scaled(
            REVEAL_SCALE, annotation["Revealing_of_the_Answer"], f"{where} Revealing_of_the_Answer"
        )
    if "Providing_Guidance" in annotation:
        labels["step_scaffolded"] = _scaled(YES_SCALE, annotation["Providing_Guidance"], f"{where} Providing_Guidance")
    if "Actionability" in annotation:
        labels["actionability"] = _scaled(YES_SCALE, annotation["Actionability"], f"{where} Actionability")
    if "Tutor_Tone" in annotation:
        labels["corrective_tone"] = _scaled(TONE_SCALE, annotation["Tutor_Tone"], f"{where} Tutor_Tone")
    return labels


_SPEAKER = re.compile(r"^\s*(tutor|teacher|student)\s*:\s*", re.IGNORECASE)


def parse_history(text: str) -> list[tuple[str, str]]:
    """ "Tutor: …" / "Student: …" lines into (role, text) turns; other lines continue the current turn."""
    turns: list[list[str]] = []
    for line in (text or "").splitlines():
        match = _SPEAKER.match(line)
        if match:
            role = "student" if match.group(1).lower() == "student" else "tutor"
            turns.append([role, line[match.end() :].strip()])
        elif turns and line.strip():
            turns[-1][1] = f"{turns[-1][1]} {line.strip()}".strip()
    return [(role, body) for role, body in turns]


def parse_mrbench(data: bytes | str) -> list[ImportedResponse]:
    try:
        records = json.loads(data)
    except json.JSONDecodeError as exc:
        raise MRBenchError(f"not JSON: {exc.msg} at line {exc.lineno}") from None
    except RecursionError:
        raise MRBenchError("the JSON is nested too deeply") from None
    if not isinstance(records, list):
        raise MRBenchError("the file must hold a JSON list of dialogues")
    found: list[ImportedResponse] = []
    seen: set[str] = set()
    for index, record in enumerate(records):
        where = f"record {index + 1}"
        if not isinstance(record, dict):
            raise MRBenchError(f"{where}: not an object")
        conversation_id = str(record.get("conversation_id") or "").strip()
        if not conversation_id:
            raise MRBenchError(f"{where}: conversation_id is missing")
        where = f"{where} ({conversation_id})"
        responses = next((record[k] for k in RESPONSE_KEYS if isinstance(record.get(k), dict)), None)
        if not responses:
            raise MRBenchError(f"{where}: no tutor responses (anno_llm_responses)")
        history = parse_history(record.get("conversation_history", ""))
        for tutor, body in responses.items():
            if not isinstance(body, dict) or not str(body.get("response", "")).strip():
                raise MRBenchError(f"{where}, {tutor}: the response text is missing")
            annotation = body.get("annotation") or {}
            if not isinstance(annotation, dict):
                raise MRBenchError(f"{where}, {tutor}: annotation must be an object")
            external_id = f"{conversation_id}:{tutor}"
            if external_id in seen:
                raise MRBenchError(f"{where}: the tutor {tutor!r} appears twice")
            seen.add(external_id)
            found.append(
                ImportedResponse(
                    external_id=external_id,
                    conversation_id=conversation_id,
                    tutor=str(tutor),
                    topic=str(record.get("Topic") or ""),
                    solution=str(record.get("Ground_Truth_Solution") or ""),
                    history=history,
                    response=str(body["response"]).strip(),
                    labels=map_annotation(annotation, f"{where}, {tutor}"),
                    source_labels={str(k): str(v) for k, v in annotation.items()},
                )
            )
    if not found:
        raise MRBenchError("the file holds no tutor responses")
    return found


@transaction.atomic
def mrbench_project_import(*, data: bytes | str, filename: str = "", name: str = "", by=None):
    """A judge-validation project whose items are the file's tutor responses and whose consensus is the
    file's labels (gold labels). Add judges to it as to any validation project. All or nothing."""
    from annotation.judge_validation import rubric as rubric_spec
    from annotation.judge_validation.services import rubric_version_for_template
    from annotation.models import AnnotationProject, GoldLabel, Item
    from annotation.services.projects import project_create, question_create
    from audits.services.runs import default_template

    responses = parse_mrbench(data)
    rubric = rubric_version_for_template(template=default_template("judge_rubric"), by=by)
    project = project_create(
        name=name or f"Judge validation on {filename or 'an MRBench-style file'} (imported labels)",
        description="Tutor responses with their published human labels, mapped to the rubric; no new annotation.",
        kind=AnnotationProject.Kind.JUDGE_VALIDATION,
        subjects=["mathematics"],
        by=by,
    )
    project.options = {
        "consensus": "gold",
        "imported_from": SOURCE,
        "filename": filename,
        "hide_persona_cue": False,
        "rubric_version_id": rubric.pk,
    }
    project.save(update_fields=["options"])
    questions = {spec["key"]: question_create(project=project, **spec) for spec in rubric_spec.question_specs()}
    items = Item.objects.bulk_create(
        [
            Item(
                project=project,
                external_id=r.external_id,
                payload={
                    "text": f"Topic: {r.topic}" if r.topic else "",
                    "turns": [{"role": role, "text": text} for role, text in [*r.history, ("tutor", r.response)]],
                    "highlight": len(r.history),
                },
                subject="mathematics",
                modality=Item.Modality.MULTI_TURN if r.history else Item.Modality.SINGLE_TURN,
                metadata={
                    "role": "imported",
                    "source": SOURCE,
                    "conversation_id": r.conversation_id,
                    "tutor": r.tutor,
                    "source_labels": r.source_labels,
                    "judge_input": {
                        "problem": r.topic or "(the problem is stated in the dialogue)",
                        "answer": r.solution,
                        "solution": r.solution,
                        "history": [list(turn) for turn in r.history],
                        "turn_text": r.response,
                    },
                },
            )
            for r in responses
        ]
    )
    gold = []
    for item, r in zip(items, responses, strict=True):
        for metric, value in r.labels.items():
            gold.append(
                GoldLabel(
                    item=item,
                    question=questions[metric],
                    value=str(value),
                    rationale=f"Imported from {SOURCE}: " + ", ".join(f"{k}={v}" for k, v in r.source_labels.items()),
                )
            )
    GoldLabel.objects.bulk_create(gold)
    return project
