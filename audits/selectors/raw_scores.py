"""An audit's raw dialogue scores read a chunk of dialogues at a time, for the streamed exports.

The rows, their values and their order are those of `raw_score_rows(audit_analysis_inputs(audit).frame)`
(`audits.selectors.results`): every judge-scored (dialogue, metric) mean by dialogue and metric, then every
conversation-level and student metric by dialogue; only finished dialogues of conditions in the design. Memory is
bounded by the chunk (keyset pagination on the dialogue id), not by the audit."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from django.db.models import QuerySet

from audits.judge import CONVERSATION_METRICS, STUDENT_METRICS
from audits.models import Audit, Dialogue
from audits.selectors.runs import audit_condition_design, judged_dialogue_means

CHUNK_DIALOGUES = 500
# Each descriptive column of a raw score row (`audits.selectors.runs.FRAME_COLUMNS` but metric and value) and the
# dialogue field it is read from.
DIALOGUE_FIELDS = {
    "dialogue": "pk",
    "tutor": "tutor_id",
    "tutor_name": "tutor__name",
    "domain": "question__domain",
    "question": "question_id",
    "condition": "condition_id",
    "condition_key": "condition__key",
    "kind": "condition__kind",
    "dimension": "condition__dimension",
    "level": "condition__level",
    "name_cue": "condition__name_cue",
    "name_gender": "condition__name_gender",
    "name_ethnicity": "condition__name_ethnicity",
    "stated_gender": "condition__stated_gender",
    "perceived_gender": "condition__perceived_gender",
}
_INTEGER_COLUMNS = frozenset(("dialogue", "tutor", "question", "condition"))


def _dialogue_chunks(dialogues: QuerySet, size: int, *fields: str) -> Iterator[list[dict[str, Any]]]:
    last = None
    while True:
        page = dialogues if last is None else dialogues.filter(pk__gt=last)
        chunk = list(page.order_by("pk").values(*DIALOGUE_FIELDS.values(), *fields)[:size])
        if not chunk:
            return
        yield chunk
        last = chunk[-1]["pk"]


def _described(dialogue: dict[str, Any]) -> dict[str, Any]:
    """The descriptive columns of a dialogue's rows, as the frame holds them (text as text, ids as integers)."""
    return {
        column: int(dialogue[field]) if column in _INTEGER_COLUMNS else str(dialogue[field])
        for column, field in DIALOGUE_FIELDS.items()
    }


def raw_score_rows_chunked(audit: Audit, *, chunk_dialogues: int | None = None) -> Iterator[dict[str, Any]]:
    """One row per (dialogue, metric) with the condition's fields (`FRAME_COLUMNS`), read `chunk_dialogues`
    dialogues at a time (default `CHUNK_DIALOGUES`): two passes over the finished dialogues, the judge's means first."""
    chunk_dialogues = chunk_dialogues or CHUNK_DIALOGUES
    dialogues = Dialogue.objects.filter(
        audit=audit, status=Dialogue.Status.DONE, condition_id__in=list(audit_condition_design(audit))
    )
    for chunk in _dialogue_chunks(dialogues, chunk_dialogues):
        described = {dialogue["pk"]: _described(dialogue) for dialogue in chunk}
        for row in judged_dialogue_means(audit, dialogue_id__in=list(described)):
            yield {**described[row["dialogue_id"]], "metric": str(row["metric"]), "value": float(row["mean"])}
    for chunk in _dialogue_chunks(dialogues, chunk_dialogues, "metrics"):
        for dialogue in chunk:
            metrics = dialogue["metrics"] or {}
            described_one = None
            for metric in CONVERSATION_METRICS + STUDENT_METRICS:
                value = metrics.get(metric)
                if value is not None:
                    described_one = described_one or _described(dialogue)
                    yield {**described_one, "metric": metric, "value": float(value)}
