"""Run a judge endpoint on a validation project's sampled turns under one rubric version, through the audit
engine's one client and its ledger (`audits.services.runs.engine_client`): a call already answered is never
sent again, so re-running costs only what changed (a new rubric text, a new judge).

Each request is built exactly as the engine builds it (`audits.judge.judge_messages` with the dialogue before
the turn, unredacted — the judge saw the real transcript), and parsed with the same strict rules and re-asks.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from django.db import connections, transaction
from django.utils import timezone

from annotation.models import Item, JudgeScore, JudgeValidation
from audits.engine import PURPOSE_JUDGE


@dataclass
class _Job:
    item_id: int
    messages: list[dict]
    context: dict  # facts a simulated judge reads; never sent to a real model
    sample_key: str
    origin: dict


def _audit_jobs(items: list[Item], template_text: str, audit) -> list[_Job]:
    from audits.judge import judge_messages
    from audits.models import Turn

    turns = Turn.objects.filter(pk__in=[i.source_turn_id for i in items]).select_related(
        "dialogue__question", "dialogue__condition"
    )
    by_id = {t.pk: t for t in turns}
    history_by_dialogue: dict[int, list[tuple[int, str, str]]] = {}
    jobs = []
    for item in items:
        turn = by_id[item.source_turn_id]
        dialogue, question, condition = turn.dialogue, turn.dialogue.question, turn.dialogue.condition
        if dialogue.pk not in history_by_dialogue:
            history_by_dialogue[dialogue.pk] = list(
                dialogue.turns.order_by("index").values_list("index", "role", "text")
            )
        context_turns = [(role, text) for index, role, text in history_by_dialogue[dialogue.pk] if index < turn.index]
        student_last = next((text for role, text in reversed(context_turns) if role == "student"), "")
        messages = judge_messages(
            template=template_text,
            question=question.text,
            answer=question.answer,
            context=context_turns,
            turn_text=turn.text,
            solution=question.solution or "",
        )
        jobs.append(
            _Job(
                item_id=item.pk,
                messages=messages,
                context={
                    "seed": audit.seed,
                    "question": question.text,
                    "answer": question.answer,
                    "choices": question.choices or [],
                    "cue_labels": condition.cue_labels(),
                    "cue_text": condition.simulated_self_description(),
                    "student_name": condition.name_cue,
                    "turn_index": turn.index,
                    "turn_text": turn.text,
                    "student_last": student_last,
                },
                sample_key=f"{audit.seed}:{question.pk}:{condition.key}",
                origin={"audit_id": audit.pk},
            )
        )
    return jobs


def _imported_jobs(items: list[Item], template_text: str) -> list[_Job]:
    """Items imported with their own dialogue (MRBench-style): metadata["judge_input"] holds it."""
    from audits.judge import judge_messages

    jobs = []
    for item in items:
        given = item.metadata.get("judge_input") or {}
        history = [(str(role), str(text)) for role, text in given.get("history", [])]
        student_last = next((text for role, text in reversed(history) if role == "student"), "")
        jobs.append(
            _Job(
                item_id=item.pk,
                messages=judge_messages(
                    template=template_text,
                    question=given.get("problem", ""),
                    answer=given.get("answer", ""),
                    context=history,
                    turn_text=given.get("turn_text", ""),
                    solution=given.get("solution", ""),
                ),
                context={
                    "seed": 0,
                    "question": given.get("problem", ""),
                    "answer": given.get("answer", ""),
                    "choices": [],
                    "turn_index": len(history),
                    "turn_text": given.get("turn_text", ""),
                    "student_last": student_last,
                },
                sample_key=f"item:{item.external_id}",
                origin={},
            )
        )
    return jobs


def judge_run(*, validation: JudgeValidation, max_reasks: int = 2) -> dict:
    """Score every sampled item of the project with the validation's judge under its rubric version.
    Blocking; run it from a Celery task for real models. Returns counts of calls sent and cached."""
    from audits.judge import METRICS, PARSE_OK, JudgeCallOutcome, judge_turn
    from audits.llm.client import CallRequest
    from audits.llm.runtime import process_runtime
    from audits.models import Audit, ModelEndpoint, PromptTemplate
    from audits.services.design import prompt_template_mark_used
    from audits.services.runs import engine_client

    project = validation.project
    endpoint = ModelEndpoint.objects.get(pk=validation.judge_endpoint_id)
    template = PromptTemplate.objects.get(pk=validation.rubric.judge_template_id)
    items = list(project.items.filter(metadata__role__in=["sample", "imported"]).order_by("id"))
    audit = Audit.objects.filter(pk=project.source_audit_id).first()
    audit_items = [i for i in items if i.source_turn_id]
    jobs = _audit_jobs(audit_items, template.text, audit) if audit_items and audit else []
    jobs += _imported_jobs([i for i in items if not i.source_turn_id], template.text)
    config = endpoint.to_config()
    counters = {"sent": 0, "cached": 0}

    async def run_all():
        client = engine_client(runtime)

        async def one(job: _Job):
            async def call(messages: list[dict], ask: int) -> JudgeCallOutcome:
                request = CallRequest(
                    endpoint=config,
                    purpose=PURPOSE_JUDGE,
                    messages=messages,
                    sample_key=job.sample_key if config.temperature > 0 else "",
                    context={**job.context, "ask": ask, "purpose": PURPOSE_JUDGE}
                    if config.provider == "simulation"
                    else {},
                    origin=job.origin,
                )
                result = await client.complete(request)
                counters["cached" if result.cached else "sent"] += 1
                return JudgeCallOutcome(result.text if result.ok else None, result.call_id, result.error)

            return job.item_id, await judge_turn(
                turn_index=int(job.context.get("turn_index", 0)),
                messages=job.messages,
                call=call,
                max_reasks=max_reasks,
            )

        return await asyncio.gather(*(one(job) for job in jobs))

    runtime = process_runtime()
    try:
        outcomes = runtime.run(run_all)
    finally:
        # The engine's database thread keeps its own connection; do not leave it open between runs.
        runtime.blocking.submit(connections.close_all).result()
    prompt_template_mark_used(template)
    rows = []
    for item_id, judgement in outcomes:
        last_call = judgement.call_ids[-1] if judgement.call_ids else None
        for metric in METRICS:
            rows.append(
                JudgeScore(
                    validation=validation,
                    item_id=item_id,
                    metric=metric,
                    value=judgement.scores.get(metric) if judgement.status == PARSE_OK else None,
                    status=judgement.status,
                    llm_call_id=last_call,
                )
            )
    with transaction.atomic():
        JudgeScore.objects.filter(validation=validation).delete()
        JudgeScore.objects.bulk_create(rows)
        JudgeValidation.objects.filter(pk=validation.pk).update(
            status=JudgeValidation.Status.SCORED,
            scored_at=timezone.now(),
            calls_sent=counters["sent"],
            calls_cached=counters["cached"],
        )
    validation.refresh_from_db()
    return {"items": len(jobs), "calls_sent": counters["sent"], "calls_cached": counters["cached"]}
