"""The annotation app's one door into the audits app: what judge validation takes from an audit.

It reads audits in annotation's terms; no other module of the app imports `audits`.

It offers an audit's scored tutor turns (the sample's candidates) and their transcripts as item payloads,
the audit judge's stored scores, model endpoints and judge_rubric templates, the engine's judge call over
the ledger with its judging runs on a worker, the demo audit, the judge-corrected contrasts of an audit (for
the cue check) and the label planner's arithmetic (the judge's error SD, labels needed for a target half-width,
Kish's design effect). Audits objects stay audits objects; the
functions here only say which of them annotation needs and how it reads them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from django.db.models import QuerySet

from annotation.judge_validation.payload import PersonaCue, turn_payload
from annotation.judge_validation.sampling import Candidate
from audits.demo import DEMO_AUDIT_NAME
from audits.engine import PURPOSE_JUDGE
from audits.judge import DEFAULT_MAX_REASKS, METRICS, PARSE_OK
from audits.judge_corrected import LabelPlan, error_sd, kish_design_effect, labels_needed
from audits.llm.dialogue import TurnToJudge
from audits.models import Audit, Condition, Dialogue, ModelEndpoint, PromptTemplate, Turn, TurnScore
from audits.selectors.results import audit_content_identities
from audits.services.analysis import AnalysisState, analysis_request
from audits.services.design import (
    TemplateTextError,
    default_template,
    prompt_template_mark_used,
    prompt_template_revise,
)
from audits.services.judge_corrected import JudgeCorrectedResults, judge_corrected_results
from audits.services.judge_runs import (
    judge_run_cancel,
    judge_run_execute,
    judge_run_open,
    judge_run_state,
    judgement_counts,
)
from audits.services.judging import judgements_run, turns_to_judge

JUDGE_METRICS: tuple[str, ...] = tuple(METRICS)
JUDGEMENT_OK = PARSE_OK  # a judgement whose scores were parsed

__all__ = [
    "AnalysisState",
    "DEFAULT_MAX_REASKS",
    "JUDGEMENT_OK",
    "JUDGE_METRICS",
    "JudgeCorrectedResults",
    "LabelPlan",
    "PURPOSE_JUDGE",
    "TemplateTextError",
    "analysis_request",
    "audit_by_id",
    "audit_judge_scores",
    "audit_turn_candidates",
    "audit_turns",
    "condition_label",
    "default_judge_template",
    "demo_audit",
    "endpoint_by_id",
    "endpoints_by_name",
    "error_sd",
    "finished_audits",
    "imported_turn_to_judge",
    "judge_corrected_results",
    "judge_endpoint",
    "judge_template",
    "judge_run_cancel",
    "judge_run_execute",
    "judge_run_open",
    "judge_run_state",
    "judgement_counts",
    "judgements_run",
    "kish_design_effect",
    "labels_needed",
    "persona_cue_of",
    "prompt_template_mark_used",
    "prompt_template_revise",
    "turn_item_payload",
    "turns_to_judge",
]


# --- Audits and endpoints -------------------------------------------------------------------------


def audit_by_id(audit_id) -> Audit | None:
    return Audit.objects.filter(pk=audit_id).first()


def finished_audits() -> QuerySet[Audit]:
    """The audits a validation project can be built from, newest first."""
    return Audit.objects.filter(status=Audit.Status.FINISHED).order_by("-id")


def demo_audit() -> Audit | None:
    """The finished demo simulation audit (`manage.py seed_demo`), if there is one."""
    return Audit.objects.filter(name=DEMO_AUDIT_NAME, status=Audit.Status.FINISHED).order_by("pk").first()


def endpoint_by_id(endpoint_id) -> ModelEndpoint | None:
    return ModelEndpoint.objects.filter(pk=endpoint_id).first()


def endpoints_by_name() -> QuerySet[ModelEndpoint]:
    """Every model endpoint a researcher can add as a judge, by name."""
    return ModelEndpoint.objects.order_by("name")


def judge_endpoint(endpoint_id: int) -> ModelEndpoint:
    """A validation's judge endpoint (raises ModelEndpoint.DoesNotExist when it was deleted)."""
    return ModelEndpoint.objects.get(pk=endpoint_id)


# --- Judge rubric templates -----------------------------------------------------------------------


def judge_template(template_id: int) -> PromptTemplate:
    """The judge_rubric template of a rubric version."""
    return PromptTemplate.objects.get(pk=template_id)


def default_judge_template() -> PromptTemplate:
    """The newest judge_rubric template (the project default is made on first use)."""
    return default_template("judge_rubric")


# --- Tutor turns and their transcripts ------------------------------------------------------------


def condition_label(condition: Condition) -> str:
    """A condition as the researcher's pages name it: its label, else its key."""
    return condition.label or condition.key


def audit_turn_candidates(audit: Audit) -> list[tuple[Candidate, dict]]:
    """Every scored tutor turn of the audit's finished dialogues, with its stratum (tutor × domain ×
    condition) and what the item needs to show it and to find its condition and question again."""
    rows = (
        Turn.objects.filter(
            dialogue__audit=audit,
            dialogue__status=Dialogue.Status.DONE,
            role=Turn.Role.TUTOR,
            judge_status=Turn.JudgeStatus.OK,
        )
        .select_related("dialogue__tutor", "dialogue__question", "dialogue__condition")
        .order_by("pk")
    )
    tutors, _ = audit_content_identities(audit)
    found = []
    for turn in rows:
        d = turn.dialogue
        stratum = (d.tutor_id, d.question.domain, d.condition_id)
        # The draw is keyed by content, never by database ids: the same audit gives the same sample anywhere.
        draw_key = json.dumps([tutors.get(d.tutor_id, d.tutor.name), d.question.domain, d.condition.key])
        found.append(
            (
                Candidate(id=turn.pk, stratum=stratum, draw_key=draw_key, order=(d.question.content_hash, turn.index)),
                {
                    "tutor": d.tutor.name,
                    "domain": d.question.domain,
                    "condition_id": d.condition_id,
                    "condition": condition_label(d.condition),
                    "condition_kind": d.condition.kind,
                    "question_id": d.question_id,
                },
            )
        )
    return found


def audit_turns(turn_ids: Iterable[int]) -> dict[int, Turn]:
    """Turns by id with their dialogue's question, condition and tutor (what an item's payload and
    metadata read)."""
    turns = Turn.objects.filter(pk__in=list(turn_ids)).select_related(
        "dialogue__question", "dialogue__condition", "dialogue__tutor"
    )
    return {turn.pk: turn for turn in turns}


def persona_cue_of(condition: Condition) -> PersonaCue:
    """The strings that reveal the student of a condition: its persona statement and the self-description
    the simulated student quotes (unless either is just the name), and the name cue."""
    statements = [condition.persona_cue, condition.simulated_self_description()]
    name = condition.name_cue or ""
    return PersonaCue(statements=tuple(s for s in statements if s and s.strip() and s.strip() != name), name=name)


def turn_item_payload(turn: Turn, *, hide_persona_cue: bool) -> dict:
    """The item payload of an audit's tutor turn: its dialogue's transcript up to the turn, highlighted."""
    dialogue = turn.dialogue
    turns = list(dialogue.turns.order_by("index").values_list("index", "role", "text"))
    position = next(i for i, (index, _, _) in enumerate(turns) if index == turn.index)
    return turn_payload(
        problem=dialogue.question.text,
        turns=[(role, text) for _, role, text in turns],
        highlight=position,
        cue=persona_cue_of(dialogue.condition),
        hide_persona_cue=hide_persona_cue,
    )


# --- The audit judge's scores ---------------------------------------------------------------------


def audit_judge_scores(*, turn_ids: Iterable[int], rubric_template_id: int) -> QuerySet[TurnScore]:
    """The audit judge's stored scores of these turns under one rubric version (turn_id, metric, value,
    status, judge_call_id)."""
    return TurnScore.objects.filter(turn_id__in=list(turn_ids), rubric_id=rubric_template_id)


# --- Judging turns through the engine -------------------------------------------------------------


def imported_turn_to_judge(*, judge_input: dict, sample_key: str) -> TurnToJudge:
    """An imported item's own dialogue (``metadata["judge_input"]``) as the judge's call reads a turn."""
    history = [(str(role), str(text)) for role, text in judge_input.get("history", [])]
    problem = judge_input.get("problem", "")
    answer = judge_input.get("answer", "")
    return TurnToJudge(
        turn_index=len(history),
        turn_text=judge_input.get("turn_text", ""),
        context=history,
        question=problem,
        answer=answer,
        solution=judge_input.get("solution", ""),
        facts={"seed": 0, "question": problem, "answer": answer, "choices": []},
        sample_key=sample_key,
        origin={},
    )
