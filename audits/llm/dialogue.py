"""One dialogue end to end, without Django: the loop through the client, every tutor turn judged, then the metrics.

The tutor turns are judged concurrently, each with the dialogue before it as context.

The database runner (`audits.services.dialogue_batches`) and the plain benchmarks both call `dialogue_execute`;
so can a notebook with a `MemoryLedger`, e.g. to calibrate the statistics on simulated audits.
`turn_judge` is the one judge call for a tutor turn: the engine uses it inside a dialogue, and
`audits.services.judging` for turns judged later (re-judging, judge validation), so both build the same
request and share the ledger. Every reply a caller cannot parse is rejected through the client, so
the ledger never serves it again.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from ..engine import (
    END_ERROR,
    PURPOSE_CHECK,
    PURPOSE_JUDGE,
    PURPOSE_STUDENT,
    PURPOSE_TUTOR,
    CallOutcome,
    DialogueResult,
    DialogueSpec,
    judge_contexts,
    run_dialogue,
)
from ..judge import (
    DEFAULT_ALLOWED_VALUES,
    DEFAULT_JUDGE_RUBRIC,
    DEFAULT_MAX_REASKS,
    METRICS,
    JudgeCallOutcome,
    TurnJudgement,
    conversation_metrics,
    judge_messages,
    judge_turn,
)
from .calls import CallRequest, EndpointConfig
from .client import LLMClient
from .request_body import parameters_summary, samples, sends_temperature


@dataclass
class DialogueEndpoints:
    tutor: EndpointConfig
    student: EndpointConfig  # forced to temperature 0 by `for_purpose` where it takes one
    judge: EndpointConfig
    check: EndpointConfig | None = None  # default: the judge model checks reveals too

    def for_purpose(self, purpose: str) -> EndpointConfig:
        if purpose == PURPOSE_TUTOR:
            return self.tutor
        if purpose == PURPOSE_STUDENT:
            # The paper's design: one fixed student model, decoded at temperature 0 — where the model takes a
            # temperature at all (a reasoning model answers at its default; the launch preview says so).
            if self.student.temperature == 0 or not sends_temperature(self.student):
                return self.student
            return self.student.with_temperature(0.0)
        if purpose == PURPOSE_CHECK:
            return self.check or self.judge
        return self.judge


def requests_preview(
    *, tutors: list[EndpointConfig], student: EndpointConfig, judge: EndpointConfig, check: EndpointConfig | None
) -> list[dict]:
    """What each role's requests carry (audits.llm.request_body), as `for_purpose` sends them: the launch preview's
    and the run page's table. The student's temperature-0 rule is said where the model cannot take it."""
    endpoints = DialogueEndpoints(tutor=student, student=student, judge=judge, check=check)
    rows = []
    roles = [*((PURPOSE_TUTOR, tutor) for tutor in tutors), (PURPOSE_STUDENT, student)]
    roles += [(PURPOSE_JUDGE, endpoints.judge), (PURPOSE_CHECK, endpoints.check or endpoints.judge)]
    for purpose, endpoint in roles:
        sent = endpoints.for_purpose(purpose) if purpose != PURPOSE_TUTOR else endpoint
        note = ""
        if purpose == PURPOSE_STUDENT:
            note = (
                "temperature 0, the paper's fixed student"
                if sends_temperature(sent)
                else "this model takes no temperature: the student answers at the model's default, not at 0"
            )
        rows.append(
            {
                "role": purpose,
                "model": sent.model,
                "parameters": parameters_summary(sent),
                "note": note,
                # The temperature sent, or None where the model takes none (it answers at its default).
                "temperature": sent.temperature if sends_temperature(sent) else None,
            }
        )
    return rows


@dataclass
class TurnToJudge:
    """One tutor turn as the judge reads it, and the facts a *simulated* judge needs (never sent)."""

    turn_index: int
    turn_text: str
    context: list[tuple[str, str]]  # the turns before it, as (role, text)
    question: str
    answer: str
    solution: str = ""
    # The dialogue's facts for simulated models (seed, question, answer, choices, cue labels and text,
    # student name): `DialogueJob.context`.
    facts: dict = field(default_factory=dict)
    sample_key: str = ""
    origin: dict = field(default_factory=dict)


async def model_call(
    client: LLMClient,
    endpoint: EndpointConfig,
    purpose: str,
    messages: list[dict],
    *,
    facts: dict,
    hints: dict,
    sample_key: str = "",
    origin: dict | None = None,
    counters: dict | None = None,
) -> CallOutcome:
    """One request through the client as the engine sends it: the sample key only when the endpoint
    samples, the facts and hints only to a simulated model. The outcome can reject its text."""
    request = CallRequest(
        endpoint=endpoint,
        purpose=purpose,
        messages=messages,
        sample_key=sample_key if samples(endpoint) else "",
        context={**facts, **hints, "purpose": purpose} if endpoint.provider == "simulation" else {},
        origin=origin or {},
    )
    result = await client.complete(request)
    if counters is not None:
        counters["cached" if result.cached else "sent"] += 1

    async def reject(problem: str) -> None:
        await client.reject(result, problem)

    return CallOutcome(
        text=result.text if result.ok else None,
        call_id=result.call_id,
        error=result.error,
        reject=reject if result.ok else None,
    )


async def turn_judge(
    turn: TurnToJudge,
    client: LLMClient,
    endpoint: EndpointConfig,
    *,
    template: str = DEFAULT_JUDGE_RUBRIC,
    max_reasks: int = DEFAULT_MAX_REASKS,
    allowed: dict | None = None,
    counters: dict | None = None,
) -> TurnJudgement:
    """Judge one tutor turn with the dialogue before it; unparsable replies are rejected and re-asked."""
    student_last = next((text for role, text in reversed(turn.context) if role == "student"), "")
    messages = judge_messages(
        template=template,
        question=turn.question,
        answer=turn.answer,
        context=turn.context,
        turn_text=turn.turn_text,
        solution=turn.solution,
    )

    allowed = allowed or dict(DEFAULT_ALLOWED_VALUES)
    metrics = tuple(allowed)

    async def call(msgs: list[dict], ask: int) -> JudgeCallOutcome:
        hints = {"turn_index": turn.turn_index, "turn_text": turn.turn_text, "student_last": student_last, "ask": ask}
        if metrics != METRICS:  # a simulated judge answers the rubric's metrics (the default five: implied)
            hints["metrics"] = list(metrics)
        outcome = await model_call(
            client,
            endpoint,
            PURPOSE_JUDGE,
            msgs,
            facts=turn.facts,
            hints=hints,
            sample_key=turn.sample_key,
            origin=turn.origin,
            counters=counters,
        )
        return JudgeCallOutcome(outcome.text, outcome.call_id, outcome.error, reject=outcome.reject)

    return await judge_turn(
        turn_index=turn.turn_index,
        messages=messages,
        call=call,
        max_reasks=max_reasks,
        allowed=allowed,
    )


@dataclass
class DialogueOutcome:
    result: DialogueResult
    judgements: list[TurnJudgement]
    metrics: dict[str, float | None]
    call_ids: list[int] = field(default_factory=list)
    calls_sent: int = 0
    calls_cached: int = 0


@dataclass
class DialogueJob:
    """What one dialogue needs besides the endpoints."""

    spec: DialogueSpec
    # Facts for simulated models (seed, answer, question, cue labels and text, choices); a real model
    # only ever sees the rendered prompts.
    context: dict
    # Distinguishes repeated samples of the same prompt when a model samples (request_body.samples).
    sample_key: str = ""
    judge_template: str = DEFAULT_JUDGE_RUBRIC
    max_reasks: int = DEFAULT_MAX_REASKS
    solution: str = ""
    origin: dict = field(default_factory=dict)
    allowed: dict = field(default_factory=lambda: dict(DEFAULT_ALLOWED_VALUES))


async def dialogue_execute(job: DialogueJob, client: LLMClient, endpoints: DialogueEndpoints) -> DialogueOutcome:
    counters = {"sent": 0, "cached": 0}

    async def send(purpose: str, messages: list[dict], hints: dict) -> CallOutcome:
        return await model_call(
            client,
            endpoints.for_purpose(purpose),
            purpose,
            messages,
            facts=job.context,
            hints=hints,
            sample_key=job.sample_key,
            origin=job.origin,
            counters=counters,
        )

    result = await run_dialogue(job.spec, send)

    async def judge_one(index: int, context: list[tuple[str, str]], text: str) -> TurnJudgement:
        turn = TurnToJudge(
            turn_index=index,
            turn_text=text,
            context=context,
            question=job.spec.question,
            answer=job.spec.answer,
            solution=job.solution,
            facts=job.context,
            sample_key=job.sample_key,
            origin=job.origin,
        )
        return await turn_judge(
            turn,
            client,
            endpoints.for_purpose(PURPOSE_JUDGE),
            template=job.judge_template,
            max_reasks=job.max_reasks,
            allowed=job.allowed,
            counters=counters,
        )

    judgements: list[TurnJudgement] = []
    if result.turns and result.end_reason != END_ERROR:
        # A failed dialogue is not judged: its scores would describe a conversation that never ended.
        judgements = list(await asyncio.gather(*(judge_one(*c) for c in judge_contexts(result.turns))))
    call_ids = list(result.call_ids)
    for judgement in judgements:
        call_ids.extend(judgement.call_ids)
    return DialogueOutcome(
        result=result,
        judgements=judgements,
        metrics=conversation_metrics(result.pairs),
        call_ids=call_ids,
        calls_sent=counters["sent"],
        calls_cached=counters["cached"],
    )
