"""Running batches of an audit's dialogues: what a worker's batch task and the inline runner do.

A batch claims its dialogues by compare-and-swap in one statement (`UPDATE … WHERE status='pending'`, or a running
one whose lease ran out because its worker died), runs each on the process's event loop through the ledgered client
(`engine_client`), and writes the turns, scores and the state change in one short transaction that
re-checks the claim. A task delivered twice, or a batch whose worker was killed, therefore loses and
duplicates nothing. The facts a simulated model reads about a dialogue (`question_facts`,
`condition_facts`, `dialogue_facts`, `dialogue_sample_key`) are shared with re-judging
(`audits.services.judging`), so its requests match the engine's.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import socket

from django.conf import settings
from django.db import close_old_connections, connections, transaction
from django.utils import timezone

from audits.engine import END_ERROR, DialogueSpec
from audits.judge import METRICS, PARSE_OK
from audits.llm.client import LLMClient, RetryPolicy, providers_preload
from audits.llm.dialogue import DialogueEndpoints, DialogueJob, DialogueOutcome, dialogue_execute
from audits.llm.runtime import LoopRuntime, process_runtime
from audits.models import Audit, Condition, Dialogue, ModelEndpoint, Question, Turn, TurnScore
from audits.prompt_templates import render_prompt
from audits.services.audit_lifecycle import audit_claimable_dialogue_ids, audit_refresh_status, audit_start_inline
from audits.services.database_outage import OUTAGE_ERRORS, drop_connection, through_outage
from audits.services.leases import (
    LeaseKeeper,
    lease_claim_ids,
    lease_claimable,
    lease_release,
    lease_renew,
    lease_token,
)
from audits.services.ledger import DatabaseLedger
from audits.services.rate_limits import limit_statuses_start, rate_limit_store

logger = logging.getLogger(__name__)


def claim_lease_seconds() -> int:
    """How long a claim holds without renewal; a dialogue held longer by a dead worker is taken up again."""
    return settings.AUDIT_CLAIM_LEASE_SECONDS


def engine_preload():
    """When a worker starts: load the client libraries its endpoints need, on a thread, before the first
    batch (otherwise the first model call imports them on the event loop). Returns that thread, or None."""
    try:
        providers = set(ModelEndpoint.objects.values_list("provider", flat=True).distinct())
    except Exception:  # the database may not be up yet: the first call then loads what it needs
        logger.warning("endpoints not readable at worker start; providers load on first use", exc_info=True)
        return None
    finally:
        close_old_connections()
    return providers_preload(providers)


def _retry_policy() -> RetryPolicy:
    return RetryPolicy(**settings.AUDIT_RETRY_POLICY)


def engine_client(runtime: LoopRuntime) -> LLMClient:
    """The process's one client (created on the runtime's loop, on first use). Its endpoints' rate
    budgets are shared with the other worker processes, and its limits are reported for the audit page."""
    client = runtime.state.get("client")
    if client is None:
        client = LLMClient(DatabaseLedger(runtime), retry=_retry_policy(), bucket_store=rate_limit_store(runtime))
        runtime.state["client"] = client
        limit_statuses_start(runtime, client)
    return client


@dataclasses.dataclass
class _BatchPlan:
    audit_id: int
    seed: int
    status: str
    endpoints: dict[int, object]  # endpoint id -> EndpointConfig
    student_id: int
    judge_id: int
    check_id: int | None
    texts: dict[str, str]
    judge_rubric_id: int
    judge_allowed: dict[str, frozenset[int]]  # the rubric version's metrics, as the judge's parser requires them
    t_max: int
    answer_precheck: bool
    max_reasks: int
    dialogues: list[dict]


def _batch_plan(audit_id: int, dialogue_ids: list[int]) -> _BatchPlan | None:
    close_old_connections()
    audit = (
        Audit.objects.select_related(
            "student_endpoint",
            "judge_endpoint",
            "check_endpoint",
            "tutor_template",
            "tutor_informed_template",
            "student_template",
            "judge_template",
            "check_template",
        )
        .filter(pk=audit_id)
        .first()
    )
    if audit is None:
        return None
    endpoints = {e.pk: e.to_config() for e in audit.endpoints()}
    now = timezone.now()
    rows = list(
        Dialogue.objects.filter(pk__in=dialogue_ids, audit_id=audit_id)
        # Only work that can be claimed: a batch delivered twice, or re-sent by a sweep, is then cheap.
        .filter(lease_claimable([Dialogue.Status.PENDING], now))
        .select_related("question", "condition")
        .order_by("pk")
    )
    dialogues = []
    for row in rows:
        q, c = row.question, row.condition
        dialogues.append(
            {"id": row.pk, "tutor_id": row.tutor_id, "question": question_facts(q), "condition": condition_facts(c)}
        )
    informed = audit.tutor_informed_template or audit.tutor_template
    return _BatchPlan(
        audit_id=audit.pk,
        seed=audit.seed,
        status=audit.status,
        endpoints=endpoints,
        student_id=audit.student_endpoint_id,
        judge_id=audit.judge_endpoint_id,
        check_id=audit.check_endpoint_id,
        texts={
            "tutor": audit.tutor_template.text,
            "tutor_informed": informed.text,
            "student": audit.student_template.text,
            "judge": audit.judge_template.text,
            "check": audit.check_template.text,
        },
        judge_rubric_id=audit.judge_template_id,
        judge_allowed=audit.judge_template.judge_allowed_values,
        t_max=audit.t_max,
        answer_precheck=audit.answer_precheck,
        max_reasks=audit.max_reasks,
        dialogues=dialogues,
    )


def question_facts(question: Question) -> dict:
    return {
        "id": question.pk,
        "text": question.text,
        "answer": question.answer,
        "solution": question.solution,
        "choices": question.choices,
    }


def condition_facts(condition: Condition) -> dict:
    return {
        "key": condition.key,
        "persona_cue": condition.persona_cue,
        "tutor_cue": condition.tutor_cue,
        "cue_labels": condition.cue_labels(),
        "cue_text": condition.simulated_self_description(),
        "name": condition.name_cue,
    }


def dialogue_facts(seed: int, q: dict, c: dict) -> dict:
    """What a simulated model reads about a dialogue (`question_facts`, `condition_facts`); judging a
    stored turn later (`audits.services.judging`) builds the same, so its requests match the engine's."""
    return {
        "seed": seed,
        "question": q["text"],
        "answer": q["answer"],
        "choices": q["choices"] or [],
        "cue_labels": c["cue_labels"],
        "cue_text": c["cue_text"],
        "student_name": c["name"],
    }


def dialogue_sample_key(seed: int, q: dict, c: dict) -> str:
    return f"{seed}:{q['id']}:{c['key']}"


def _dialogue_job(plan: _BatchPlan, item: dict) -> DialogueJob:
    q, c = item["question"], item["condition"]
    tutor_text = plan.texts["tutor_informed"] if c["tutor_cue"] else plan.texts["tutor"]
    tutor_system = render_prompt(
        tutor_text, question=q["text"], answer=q["answer"], solution=q["solution"] or "", tutor_cue=c["tutor_cue"]
    )
    student_system = render_prompt(plan.texts["student"], question=q["text"], persona_cue=c["persona_cue"])
    spec = DialogueSpec(
        question=q["text"],
        answer=q["answer"],
        tutor_system=tutor_system,
        student_system=student_system,
        check_template=plan.texts["check"],
        t_max=plan.t_max,
        answer_precheck=plan.answer_precheck,
        max_check_reasks=plan.max_reasks,
    )
    return DialogueJob(
        spec=spec,
        context=dialogue_facts(plan.seed, q, c),
        sample_key=dialogue_sample_key(plan.seed, q, c),
        judge_template=plan.texts["judge"],
        allowed=plan.judge_allowed,
        max_reasks=plan.max_reasks,
        solution=q["solution"] or "",
        origin={"audit_id": plan.audit_id},
    )


def _claim(audit_id: int, dialogue_ids: list[int], token: str, lease: int) -> set[int]:
    """Claim the batch's dialogues of a running audit (pending, or running under a lease that ran out) in one
    UPDATE; returns the ids claimed (the others another worker holds, or they are done)."""
    jobs = Dialogue.objects.filter(pk__in=dialogue_ids, audit_id=audit_id, audit__status=Audit.Status.RUNNING)
    return lease_claim_ids(jobs, token=token, seconds=lease, statuses=[Dialogue.Status.PENDING])


def _renew(token: str, lease: int) -> int:
    """Renew the lease of every dialogue the batch holds."""
    return lease_renew(Dialogue.objects.all(), token=token, seconds=lease)


def _finish(audit_id: int, dialogue_id: int, token: str, outcome: DialogueOutcome, rubric_id: int) -> bool:
    """Write the dialogue's turns, scores and calls with its new status, if the claim still holds."""
    result = outcome.result
    failed = result.end_reason == END_ERROR
    with transaction.atomic():
        updated = lease_release(
            Dialogue.objects.filter(pk=dialogue_id),
            token=token,
            status=Dialogue.Status.FAILED if failed else Dialogue.Status.DONE,
            end_reason=result.end_reason,
            error=result.error[:2000],
            metrics=outcome.metrics,
            calls_sent=outcome.calls_sent,
            calls_cached=outcome.calls_cached,
            finished_at=timezone.now(),
        )
        if updated != 1:
            return False  # the lease ran out and another worker took the dialogue over
        judgements = {j.turn_index: j for j in outcome.judgements}
        turns = Turn.objects.bulk_create(
            [
                Turn(
                    dialogue_id=dialogue_id,
                    index=index,
                    role=turn.role,
                    text=turn.text,
                    llm_call_id=turn.call_id,
                    judge_status=judgements[index].status if index in judgements else "",
                )
                for index, turn in enumerate(result.turns)
            ]
        )
        scores = []
        for turn in turns:
            judgement = judgements.get(turn.index)
            if judgement is None:
                continue
            last_call = judgement.call_ids[-1] if judgement.call_ids else None
            for metric in outcome_metrics(judgement):
                scores.append(
                    TurnScore(
                        turn_id=turn.pk,
                        dialogue_id=dialogue_id,
                        audit_id=audit_id,
                        metric=metric,
                        value=judgement.scores.get(metric) if judgement.status == PARSE_OK else None,
                        rubric_id=rubric_id,
                        status=judgement.status,
                        raw="" if judgement.status == PARSE_OK else judgement.raw[:4000],
                        problem=judgement.problem[:300],
                        judge_call_id=last_call,
                    )
                )
        TurnScore.objects.bulk_create(scores)
        through = Dialogue.calls.through
        through.objects.bulk_create(
            [through(dialogue_id=dialogue_id, llmcall_id=i) for i in set(outcome.call_ids) if i],
            ignore_conflicts=True,
        )
    return True


def outcome_metrics(judgement) -> list[str]:
    """A judgement's score rows: its scores' metrics, else the metrics its rubric asked for."""
    return list(judgement.scores) if judgement.scores else list(judgement.metrics or METRICS)


def _release(dialogue_id: int, token: str, error: str) -> None:
    """A dialogue whose run raised (a bug, not a model failure) is marked failed with the error."""
    lease_release(
        Dialogue.objects.filter(pk=dialogue_id),
        token=token,
        status=Dialogue.Status.FAILED,
        end_reason=END_ERROR,
        error=error[:2000],
    )


def _audit_status(audit_id: int) -> str:
    return Audit.objects.filter(pk=audit_id).values_list("status", flat=True).first() or ""


async def batch_run_async(runtime: LoopRuntime, audit_id: int, dialogue_ids: list[int], worker: str) -> dict:
    plan = await runtime.run_blocking(_batch_plan, audit_id, dialogue_ids)
    if plan is None or plan.status != Audit.Status.RUNNING:
        return {"claimed": 0, "skipped": len(dialogue_ids), "reason": "audit not running"}
    client = engine_client(runtime)
    client.retry = _retry_policy()
    endpoints_by_tutor = {}
    check = plan.endpoints.get(plan.check_id) if plan.check_id else None
    for item in plan.dialogues:
        tutor_id = item["tutor_id"]
        if tutor_id not in endpoints_by_tutor:
            endpoints_by_tutor[tutor_id] = DialogueEndpoints(
                tutor=plan.endpoints[tutor_id],
                student=plan.endpoints[plan.student_id],
                judge=plan.endpoints[plan.judge_id],
                check=check,
            )
    token = lease_token(worker)
    lease = claim_lease_seconds()
    counts = {"claimed": 0, "done": 0, "lost": 0, "skipped": 0, "errors": 0, "interrupted": 0}

    def renew() -> int:
        return _renew(token, lease)

    # A lease that ran out during an outage is taken over; a moment holding no dialogue loses nothing.
    keeper = LeaseKeeper(renew, every=max(1.0, lease / 3), name=f"audit-{audit_id}-batch-lease", many=True)

    async def one(item: dict) -> None:
        try:
            await run_claimed(item)
        except OUTAGE_ERRORS as exc:
            # Not the dialogue's fault: its claim is left to run out, and it is taken up again (its answers so far
            # are in the ledger). Marking it failed would need the database, and would be wrong.
            logger.warning("dialogue %s interrupted: the database is unreachable (%s)", item["id"], exc)
            counts["interrupted"] += 1
            await runtime.run_blocking(drop_connection)

    async def run_claimed(item: dict) -> None:
        try:
            outcome = await dialogue_execute(_dialogue_job(plan, item), client, endpoints_by_tutor[item["tutor_id"]])
        except OUTAGE_ERRORS:
            raise
        except Exception as exc:  # a bug must not take the batch down; the dialogue shows the error
            logger.exception("dialogue %s raised", item["id"])
            counts["errors"] += 1
            await runtime.run_blocking(_release, item["id"], token, f"{type(exc).__name__}: {exc}")
            return
        written = await runtime.run_blocking(
            through_outage, _finish, audit_id, item["id"], token, outcome, plan.judge_rubric_id
        )
        counts["done" if written else "lost"] += 1

    # The whole batch is claimed in one statement (not one per dialogue): every dialogue of it started at once
    # anyway, and a round trip per dialogue was the database thread's largest cost after the ledger's.
    try:
        claimed = await runtime.run_blocking(
            through_outage, _claim, audit_id, [d["id"] for d in plan.dialogues], token, lease
        )
    except OUTAGE_ERRORS as exc:
        # Whatever the claim took keeps it until its lease runs out, and is then taken up again.
        logger.warning("batch of audit %s interrupted: the database is unreachable (%s)", audit_id, exc)
        counts["interrupted"] = len(plan.dialogues)
        await runtime.run_blocking(drop_connection)
        return counts
    mine = [item for item in plan.dialogues if item["id"] in claimed]
    counts["claimed"], counts["skipped"] = len(mine), len(plan.dialogues) - len(mine)
    renewer = asyncio.create_task(keeper.keep_on(runtime))
    try:
        await asyncio.gather(*(one(item) for item in mine))
    finally:
        renewer.cancel()
    return counts


def dialogue_batch_run(*, audit_id: int, dialogue_ids: list[int], worker: str = "") -> dict:
    """Run a batch (blocking): claim, run and write each dialogue; then update the audit's status."""
    runtime = process_runtime()
    worker = worker or socket.gethostname()
    try:
        counts = runtime.run(lambda: batch_run_async(runtime, audit_id, list(dialogue_ids), worker))
    finally:
        # The database thread outlives the batch; its connection should not (stale or held-open sessions).
        runtime.blocking.submit(connections.close_all).result()
    audit_refresh_status(audit_id=audit_id)
    return counts


def audit_run_inline(*, audit: Audit, progress=None) -> str:
    """Run every claimable dialogue of a launched audit in this process (the demo and `run_audit
    --inline`), batch by batch, without a worker. Returns the audit's final status."""
    if audit.status == Audit.Status.DRAFT:
        audit_start_inline(audit=audit)
    while True:
        ids = audit_claimable_dialogue_ids(audit_id=audit.pk)
        if not ids or _audit_status(audit.pk) != Audit.Status.RUNNING:
            break
        for start in range(0, len(ids), audit.batch_size):
            dialogue_batch_run(audit_id=audit.pk, dialogue_ids=ids[start : start + audit.batch_size], worker="inline")
            if progress is not None:
                progress()
    return audit_refresh_status(audit_id=audit.pk)
