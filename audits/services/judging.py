"""Judging tutor turns after their dialogue ran: re-judging an audit's failed turns, and judging under another judge.

It is the one online path for re-judging an audit's unparsable and failed turns, and for judging turns under another
judge or rubric (judge validation).

Each turn is judged by `audits.llm.dialogue.turn_judge` — the call the engine makes inside a dialogue,
built from the same facts — through the process's one client and its ledger, on the process's event
loop. A call already answered is not sent again; an answer recorded unparsable is never served: it is
asked afresh under its next attempt key. So re-judging costs only the turns that had no usable
answer, and judging the same turns twice sends nothing the second time.

- `turns_judge(turn_ids=…, judge_endpoint=…, judge_template=…)`: judge stored turns, return the
  judgements (writes only ledger rows). `judgements_run` does the same for any `TurnToJudge` (turns
  that are not Turn rows, e.g. imported dialogues).
- `turn_scores_store`: write judgements as an audit's TurnScore rows and the turns' judge status.
- `audit_turns_rejudge(audit=…)`: queue the re-judging of an audit's unparsable and failed turns (page,
  API, `run_audit --rejudge`); `audit_turns_rejudge_run` is the task's body.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, field

from django.db import connections, transaction
from django.db.models import QuerySet

from audits.judge import DEFAULT_MAX_REASKS, PARSE_OK, TurnJudgement
from audits.llm.dialogue import TurnToJudge, turn_judge
from audits.llm.runtime import process_runtime
from audits.models import Audit, Dialogue, ModelEndpoint, PromptTemplate, Turn, TurnScore
from audits.services.analysis import analysis_start
from audits.services.dialogue_batches import (
    condition_facts,
    dialogue_facts,
    dialogue_sample_key,
    engine_client,
    question_facts,
)
from audits.services.task_queue import AUDIT_TURNS_REJUDGE, audit_task_queue, task_send

logger = logging.getLogger(__name__)

# Turns judged per round trip to the event loop (and per write transaction) while re-judging an audit.
REJUDGE_CHUNK = 200


@dataclass
class JudgingResult:
    judgements: dict[Hashable, TurnJudgement] = field(default_factory=dict)
    calls_sent: int = 0
    calls_cached: int = 0


def turns_to_judge(*, turn_ids: Iterable[int]) -> dict[int, TurnToJudge]:
    """Stored tutor turns as the judge reads them (the dialogue before each turn, the question, and the
    facts the engine gave a simulated judge), by Turn id. Student turns are left out."""
    turns = list(
        Turn.objects.filter(pk__in=list(turn_ids), role=Turn.Role.TUTOR).select_related(
            "dialogue__audit", "dialogue__question", "dialogue__condition"
        )
    )
    histories: dict[int, list[tuple[int, str, str]]] = {}
    for index, dialogue_id, role, text in (
        Turn.objects.filter(dialogue_id__in={t.dialogue_id for t in turns})
        .order_by("dialogue_id", "index")
        .values_list("index", "dialogue_id", "role", "text")
    ):
        histories.setdefault(dialogue_id, []).append((index, role, text))
    found: dict[int, TurnToJudge] = {}
    for turn in turns:
        dialogue = turn.dialogue
        q, c = question_facts(dialogue.question), condition_facts(dialogue.condition)
        seed = dialogue.audit.seed
        found[turn.pk] = TurnToJudge(
            turn_index=turn.index,
            turn_text=turn.text,
            context=[(role, text) for index, role, text in histories[dialogue.pk] if index < turn.index],
            question=q["text"],
            answer=q["answer"],
            solution=q["solution"] or "",
            facts=dialogue_facts(seed, q, c),
            sample_key=dialogue_sample_key(seed, q, c),
            origin={"audit_id": dialogue.audit_id},
        )
    return found


def judgements_run(
    *,
    turns: Mapping[Hashable, TurnToJudge],
    judge_endpoint: ModelEndpoint,
    template_text: str,
    max_reasks: int = DEFAULT_MAX_REASKS,
    allowed: dict | None = None,
    run=None,
    keep_alive=None,
) -> JudgingResult:
    """Judge every turn (concurrently, within the endpoint's limits) on the process's event loop and
    return the judgements by the same keys. Blocking; writes only ledger rows.

    Within a judging run on a worker (`run`, an `audits.models.JudgeRun` whose endpoint is batch-capable)
    the turns go through the Batch API instead (`audits.services.batch_judging`), at the batch price."""
    if run is not None and run.via_batch and turns:
        # Imported here, not at the top: the Batch API path loads the OpenAI SDK, which costs over a
        # second, and only a worker running a batch-capable judging run takes it.
        from audits.services.batch_judging import lines_sent, turns_judge_by_batch

        keys = list(turns)
        sent_before = lines_sent(run)
        judgements = turns_judge_by_batch(
            run=run,
            turns=[turns[key] for key in keys],
            endpoint=judge_endpoint,
            template=template_text,
            max_reasks=max_reasks,
            allowed=allowed,
            keep_alive=keep_alive or (lambda: None),
        )
        sent = lines_sent(run) - sent_before  # lines the provider ran, not lines it never took
        asked = sum(len(j.call_ids) for j in judgements)
        return JudgingResult(dict(zip(keys, judgements, strict=True)), sent, max(0, asked - sent))

    config = judge_endpoint.to_config()
    counters = {"sent": 0, "cached": 0}
    keys = list(turns)
    runtime = process_runtime()

    async def run_all() -> list[TurnJudgement]:
        client = engine_client(runtime)
        return list(
            await asyncio.gather(
                *(
                    turn_judge(
                        turns[key],
                        client,
                        config,
                        template=template_text,
                        max_reasks=max_reasks,
                        allowed=allowed,
                        counters=counters,
                    )
                    for key in keys
                )
            )
        )

    if not keys:
        return JudgingResult()
    try:
        judgements = runtime.run(run_all)
    finally:
        # The engine's database thread keeps its own connection; do not leave it open between runs.
        runtime.blocking.submit(connections.close_all).result()
    return JudgingResult(dict(zip(keys, judgements, strict=True)), counters["sent"], counters["cached"])


def turns_judge(
    *,
    turn_ids: Iterable[int],
    judge_endpoint: ModelEndpoint,
    judge_template: PromptTemplate | str,
    max_reasks: int = DEFAULT_MAX_REASKS,
    allowed: dict | None = None,
) -> JudgingResult:
    """Judge stored tutor turns with a judge endpoint under a rubric (a judge_rubric PromptTemplate or its
    text), the way the engine judges them; judgements by Turn id. Nothing but ledger rows is written:
    store them with `turn_scores_store`, or in a table of your own."""
    text = judge_template.text if isinstance(judge_template, PromptTemplate) else judge_template
    if allowed is None and isinstance(judge_template, PromptTemplate):
        allowed = judge_template.judge_allowed_values
    return judgements_run(
        turns=turns_to_judge(turn_ids=turn_ids),
        judge_endpoint=judge_endpoint,
        template_text=text,
        max_reasks=max_reasks,
        allowed=allowed,
    )


def turn_scores_store(
    *, judgements: Mapping[int, TurnJudgement], rubric: PromptTemplate, replacing: Iterable[str] | None = None
) -> int:
    """Write judgements (by Turn id) as the turns' TurnScore rows under `rubric` and set each turn's
    judge status. With `replacing`, a turn is written only while its judge status is still one of those
    (compare-and-swap), so two re-judging runs at once write each turn once. Returns the turns written."""
    written = 0
    # A turn's judge status is its judgement under its audit's own rubric; scores under another rubric
    # version (re-judging the audit under a new one) are stored beside them and leave the status alone.
    own_rubric = set(
        Turn.objects.filter(pk__in=list(judgements), dialogue__audit__judge_template_id=rubric.pk).values_list(
            "pk", flat=True
        )
    )
    with transaction.atomic():
        for turn_id, judgement in judgements.items():
            turns = Turn.objects.filter(pk=turn_id, role=Turn.Role.TUTOR)
            if turn_id not in own_rubric:
                if not turns.exists():
                    continue
            else:
                if replacing is not None:
                    turns = turns.filter(judge_status__in=list(replacing))
                if turns.update(judge_status=judgement.status) != 1:
                    continue
            dialogue_id, audit_id = Turn.objects.filter(pk=turn_id).values_list("dialogue_id", "dialogue__audit_id")[0]
            written += 1
            TurnScore.objects.filter(turn_id=turn_id, rubric=rubric).delete()
            last_call = judgement.call_ids[-1] if judgement.call_ids else None
            metrics = list(judgement.scores) if judgement.scores else list(judgement.metrics or rubric.judge_metrics)
            TurnScore.objects.bulk_create(
                TurnScore(
                    turn_id=turn_id,
                    dialogue_id=dialogue_id,
                    audit_id=audit_id,
                    metric=metric,
                    value=judgement.scores.get(metric) if judgement.status == PARSE_OK else None,
                    rubric=rubric,
                    status=judgement.status,
                    raw="" if judgement.status == PARSE_OK else judgement.raw[:4000],
                    problem=judgement.problem[:300],
                    judge_call_id=last_call,
                )
                for metric in metrics
            )
            through = Dialogue.calls.through
            through.objects.bulk_create(
                [through(dialogue_id=dialogue_id, llmcall_id=i) for i in set(judgement.call_ids) if i],
                ignore_conflicts=True,
            )
    return written


# --- re-judging an audit's unparsable and failed turns -----------------------------------------------

REJUDGE_STATUSES = (Turn.JudgeStatus.UNPARSABLE, Turn.JudgeStatus.FAILED)


def audit_turns_to_rejudge(*, audit: Audit) -> QuerySet:
    """Tutor turns of the audit's finished dialogues whose judgement is unparsable or whose judge call
    failed (a failed dialogue is retried whole, not re-judged)."""
    return Turn.objects.filter(
        dialogue__audit=audit,
        dialogue__status=Dialogue.Status.DONE,
        role=Turn.Role.TUTOR,
        judge_status__in=REJUDGE_STATUSES,
    ).order_by("pk")


def audit_turns_rejudge(*, audit: Audit) -> int:
    """Queue the re-judging of the audit's unparsable and failed turns on the workers; returns how many
    turns it will ask about. A cancelled or draft audit has nothing to re-judge (ValueError)."""
    if audit.status in (Audit.Status.DRAFT, Audit.Status.CANCELLED):
        raise ValueError(f"a {audit.get_status_display().lower()} audit has no turns to re-judge")
    count = audit_turns_to_rejudge(audit=audit).count()
    if count:
        queue = audit_task_queue()
        transaction.on_commit(lambda: task_send(AUDIT_TURNS_REJUDGE, (audit.pk,), queue=queue))
    return count


def audit_turns_rejudge_run(*, audit_id: int) -> dict:
    """Re-judge the audit's unparsable and failed turns with its judge and rubric, chunk by chunk, and
    store the new judgements. Safe to run twice at once or after a crash: each turn is written only
    while it is still unparsable or failed, and the ledger keeps every call made."""
    audit = Audit.objects.select_related("judge_endpoint", "judge_template").filter(pk=audit_id).first()
    counts = {"turns": 0, "scored": 0, "unparsable": 0, "failed": 0, "calls_sent": 0, "calls_cached": 0}
    if audit is None:
        return counts
    ids = list(audit_turns_to_rejudge(audit=audit).values_list("pk", flat=True))
    for start in range(0, len(ids), REJUDGE_CHUNK):
        chunk = ids[start : start + REJUDGE_CHUNK]
        result = turns_judge(
            turn_ids=chunk,
            judge_endpoint=audit.judge_endpoint,
            judge_template=audit.judge_template,
            max_reasks=audit.max_reasks,
        )
        turn_scores_store(judgements=result.judgements, rubric=audit.judge_template, replacing=REJUDGE_STATUSES)
        counts["turns"] += len(result.judgements)
        counts["calls_sent"] += result.calls_sent
        counts["calls_cached"] += result.calls_cached
        for judgement in result.judgements.values():
            key = {PARSE_OK: "scored", Turn.JudgeStatus.UNPARSABLE: "unparsable"}.get(judgement.status, "failed")
            counts[key] += 1
    logger.info("audit %s re-judged: %s", audit_id, counts)
    if counts["turns"]:
        analysis_start(audit_id=audit_id)  # new scores: the default analysis again, before anyone asks
    return counts


__all__ = [
    "JudgingResult",
    "audit_turns_rejudge",
    "audit_turns_rejudge_run",
    "audit_turns_to_rejudge",
    "judgements_run",
    "turn_scores_store",
    "turns_judge",
    "turns_to_judge",
]
