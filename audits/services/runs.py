"""Writes of running audits: create, launch, pause, resume, cancel, clone; run a batch of dialogues.

The database is the truth (ARCHITECTURE.md decision 1). `audit_launch` creates every Dialogue row
idempotently and, on commit, sends batches of dialogue ids to Celery. A batch claims each dialogue by
compare-and-swap (`UPDATE … WHERE status='pending'`, or a running one whose lease ran out because its
worker died), runs it on the process's event loop through the ledgered client, and writes the turns,
scores and the state change in one short transaction that re-checks the claim. Progress is a count of
rows. A task delivered twice, or a batch whose worker was killed, therefore loses and duplicates
nothing.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import socket
import uuid
from collections.abc import Iterable, Sequence
from datetime import timedelta

from django.conf import settings
from django.db import close_old_connections, connections, transaction
from django.db.models import F, Q
from django.utils import timezone

from audits.engine import END_ERROR, DialogueSpec
from audits.judge import PARSE_OK
from audits.llm.client import LLMClient, RetryPolicy
from audits.llm.dialogue import DialogueEndpoints, DialogueJob, DialogueOutcome, dialogue_execute
from audits.llm.runtime import LoopRuntime, process_runtime
from audits.models import (
    Audit,
    Condition,
    Dialogue,
    ModelEndpoint,
    PromptTemplate,
    Question,
    Turn,
    TurnScore,
)
from audits.prompt_templates import render_prompt
from audits.services.ledger import DatabaseLedger

logger = logging.getLogger(__name__)


def claim_lease_seconds() -> int:
    """How long a claim holds without renewal; a dialogue held longer by a dead worker is taken up again."""
    return settings.AUDIT_CLAIM_LEASE_SECONDS


def audit_task_queue() -> str:
    return settings.AUDITS_TASK_QUEUE


# --- conditions ----------------------------------------------------------------------------------

CONDITION_FIELDS = (
    "kind",
    "key",
    "label",
    "dimension",
    "level",
    "name_cue",
    "name_gender",
    "name_ethnicity",
    "name_row",
    "stated_gender",
    "perceived_gender",
    "persona_cue",
    "tutor_cue",
)


def _as_dict(spec) -> dict:
    if dataclasses.is_dataclass(spec):
        return dataclasses.asdict(spec)
    return dict(spec)


def condition_values(spec) -> dict:
    """A condition specification (`audits.conditions.ConditionSpec`, or a dict with the same fields)
    as Condition fields. The levels of an intersectional condition are joined with '+'."""
    raw = _as_dict(spec)
    values = {field: str(raw.get(field) or "") for field in CONDITION_FIELDS}
    levels = raw.get("levels") or ()
    if levels and not values["level"]:
        values["level"] = "+".join(str(level["level"]) for level in levels)
    if not values["kind"]:
        raise ValueError(f"condition without a kind: {raw}")
    if not values["key"]:
        values["key"] = condition_key(values)
    values["label"] = values["label"] or values["key"]
    return values


def condition_key(values: dict) -> str:
    """A readable signature for a specification that brought no key of its own."""
    parts = [values["kind"]]
    for field in ("dimension", "level", "name_cue", "stated_gender", "perceived_gender"):
        if values.get(field):
            parts.append(f"{field}={values[field]}")
    return "/".join(parts)


# --- endpoints ----------------------------------------------------------------------------------


def endpoint_connection_test(*, endpoint: ModelEndpoint) -> tuple[bool, str]:
    """One small request to the endpoint (no ledger, no retries), its outcome stored on the endpoint for the
    launch form's warning. Never reports the key."""
    if endpoint.is_simulation:
        ok, message = True, "simulation endpoint: answers offline, no connection needed"
    else:
        from audits.llm.openai_compat import endpoint_connection_check

        ok, message = asyncio.run(endpoint_connection_check(endpoint.to_config()))
    outcome = {"last_test_ok": ok, "last_test_message": message[:500], "last_tested_at": timezone.now()}
    ModelEndpoint.objects.filter(pk=endpoint.pk).update(**outcome)
    for field, value in outcome.items():
        setattr(endpoint, field, value)
    return ok, message


# --- creating and steering audits -----------------------------------------------------------------


def default_template(kind: str, name: str | None = None) -> PromptTemplate:
    """The newest version of a template kind (and name), creating the project default if none exists."""
    from audits.prompt_templates import DEFAULT_TEMPLATES

    found = PromptTemplate.objects.filter(kind=kind)
    if name:
        found = found.filter(name=name)
    template = found.order_by("-version", "-id").first()
    if template is not None:
        return template
    default = next(t for t in DEFAULT_TEMPLATES if t["kind"] == kind and (name is None or t["name"] == name))
    template, _ = PromptTemplate.objects.get_or_create(
        kind=kind,
        name=default["name"],
        version=1,
        defaults={"text": default["text"], "description": default["description"]},
    )
    return template


@transaction.atomic
def audit_create(
    *,
    name: str,
    tutors: Sequence[ModelEndpoint],
    student_endpoint: ModelEndpoint,
    judge_endpoint: ModelEndpoint,
    questions: Iterable[Question],
    conditions: Iterable,
    check_endpoint: ModelEndpoint | None = None,
    seed: int = 0,
    t_max: int = 10,
    answer_precheck: bool = False,
    max_reasks: int = 2,
    templates: dict[str, PromptTemplate] | None = None,
    question_selection: dict | None = None,
    design: dict | None = None,
    description: str = "",
    batch_size: int = 100,
    created_by=None,
    config_hash: str = "",
) -> Audit:
    if not tutors:
        raise ValueError("an audit needs at least one tutor")
    templates = templates or {}
    audit = Audit.objects.create(
        name=name,
        description=description,
        student_endpoint=student_endpoint,
        judge_endpoint=judge_endpoint,
        check_endpoint=check_endpoint,
        seed=seed,
        t_max=t_max,
        answer_precheck=answer_precheck,
        max_reasks=max_reasks,
        tutor_template=templates.get("tutor") or default_template("tutor_system", "tutor"),
        tutor_informed_template=templates.get("tutor_informed") or default_template("tutor_system", "tutor-informed"),
        student_template=templates.get("student") or default_template("student_persona"),
        judge_template=templates.get("judge") or default_template("judge_rubric"),
        check_template=templates.get("check") or default_template("reveal_check"),
        question_selection=question_selection or {},
        design=design or {},
        batch_size=batch_size,
        created_by=created_by,
        config_hash=config_hash,
    )
    audit.tutors.set(tutors)
    audit.questions.set(list(questions))
    condition_rows = {}
    for spec in conditions:
        values = condition_values(spec)
        condition_rows.setdefault(values["key"], Condition(audit=audit, spec=_jsonable(spec), **values))
    if not condition_rows:
        raise ValueError("an audit needs at least one condition")
    Condition.objects.bulk_create(condition_rows.values())
    return audit


def _jsonable(spec) -> dict:
    return json.loads(json.dumps(_as_dict(spec), default=str))


def _enqueue_batches(audit: Audit, dialogue_ids: list[int]) -> int:
    from audits.tasks import audit_run_batch_task

    batches = [dialogue_ids[i : i + audit.batch_size] for i in range(0, len(dialogue_ids), audit.batch_size)]
    queue = audit_task_queue()
    for batch in batches:
        transaction.on_commit(lambda b=batch: audit_run_batch_task.apply_async((audit.pk, b), queue=queue))
    return len(batches)


def _mark_templates_used(audit: Audit) -> None:
    ids = [
        audit.tutor_template_id,
        audit.tutor_informed_template_id,
        audit.student_template_id,
        audit.judge_template_id,
        audit.check_template_id,
    ]
    # A queryset update: used versions may not be saved again (their model refuses), and need not be.
    PromptTemplate.objects.filter(pk__in=[i for i in ids if i], used_at__isnull=True).update(used_at=timezone.now())


@transaction.atomic
def audit_dialogues_create(*, audit: Audit) -> int:
    """Every (tutor, question, condition) Dialogue row; idempotent (the cell is unique). Returns the count."""
    tutor_ids = list(audit.tutors.values_list("pk", flat=True))
    question_ids = list(audit.questions.values_list("pk", flat=True))
    condition_ids = list(audit.conditions.values_list("pk", flat=True))
    rows = [
        Dialogue(audit=audit, tutor_id=t, question_id=q, condition_id=c)
        for t in tutor_ids
        for q in question_ids
        for c in condition_ids
    ]
    Dialogue.objects.bulk_create(rows, ignore_conflicts=True, batch_size=500)
    return len(rows)


@transaction.atomic
def audit_launch(*, audit: Audit) -> int:
    """Create the dialogues and start the workers on them. Returns the number of batches enqueued.

    Launching a running or finished audit again is harmless: rows exist, only pending work is sent. A
    finished audit with nothing pending stays finished, its launch and finish times untouched.
    """
    audit = Audit.objects.select_for_update().get(pk=audit.pk)
    if audit.status == Audit.Status.CANCELLED:
        raise ValueError("a cancelled audit cannot be launched; clone it instead")
    audit_dialogues_create(audit=audit)
    if audit.status == Audit.Status.FINISHED and not _claimable_ids(audit.pk):
        return 0
    _mark_templates_used(audit)
    Audit.objects.filter(pk=audit.pk).update(
        status=Audit.Status.RUNNING, launched_at=audit.launched_at or timezone.now(), finished_at=None
    )
    audit.status = Audit.Status.RUNNING
    pending = list(audit.dialogues.filter(status=Dialogue.Status.PENDING).order_by("pk").values_list("pk", flat=True))
    batches = _enqueue_batches(audit, pending)
    if not pending:
        transaction.on_commit(lambda: audit_refresh_status(audit_id=audit.pk))
    return batches


def audit_pause(*, audit: Audit) -> bool:
    """Stop claiming new dialogues; those already running finish."""
    return bool(Audit.objects.filter(pk=audit.pk, status=Audit.Status.RUNNING).update(status=Audit.Status.PAUSED))


@transaction.atomic
def audit_resume(*, audit: Audit) -> int:
    """Continue a paused audit (or sweep a running one): send its pending and stale work to the workers."""
    updated = Audit.objects.filter(pk=audit.pk, status__in=[Audit.Status.PAUSED, Audit.Status.RUNNING]).update(
        status=Audit.Status.RUNNING
    )
    if not updated:
        return 0
    audit.refresh_from_db()
    return _enqueue_batches(audit, _claimable_ids(audit.pk))


@transaction.atomic
def audit_cancel(*, audit: Audit) -> int:
    """Cancel: pending dialogues become cancelled; running ones finish. Returns how many were cancelled."""
    Audit.objects.filter(pk=audit.pk).exclude(status=Audit.Status.FINISHED).update(
        status=Audit.Status.CANCELLED, finished_at=timezone.now()
    )
    return Dialogue.objects.filter(audit_id=audit.pk, status=Dialogue.Status.PENDING).update(
        status=Dialogue.Status.CANCELLED
    )


@transaction.atomic
def audit_retry_failed(*, audit: Audit) -> int:
    """Put failed dialogues back to pending (their partial turns removed) and send them to the workers."""
    failed = Dialogue.objects.filter(audit_id=audit.pk, status=Dialogue.Status.FAILED)
    ids = list(failed.values_list("pk", flat=True))
    Turn.objects.filter(dialogue_id__in=ids).delete()
    Dialogue.calls.through.objects.filter(dialogue_id__in=ids).delete()
    failed.update(status=Dialogue.Status.PENDING, end_reason="", error="", claimed_by="", lease_until=None)
    Audit.objects.filter(pk=audit.pk).update(status=Audit.Status.RUNNING, finished_at=None)
    audit.refresh_from_db()
    return _enqueue_batches(audit, ids)


def _claimable_ids(audit_id: int) -> list[int]:
    now = timezone.now()
    return list(
        Dialogue.objects.filter(audit_id=audit_id)
        .filter(Q(status=Dialogue.Status.PENDING) | Q(status=Dialogue.Status.RUNNING, lease_until__lt=now))
        .order_by("pk")
        .values_list("pk", flat=True)
    )


def audit_refresh_status(*, audit_id: int) -> str:
    """A running audit with nothing pending or running is finished (compare-and-swap on the status)."""
    open_work = Dialogue.objects.filter(
        audit_id=audit_id, status__in=[Dialogue.Status.PENDING, Dialogue.Status.RUNNING]
    ).exists()
    if not open_work:
        Audit.objects.filter(pk=audit_id, status=Audit.Status.RUNNING).update(
            status=Audit.Status.FINISHED, finished_at=timezone.now()
        )
    return Audit.objects.filter(pk=audit_id).values_list("status", flat=True).first() or ""


def audit_sweep(*, audit_id: int | None = None) -> int:
    """Re-send pending and stale work of running audits (after a worker died); returns batches sent.

    Runs when a worker starts and after each batch. If claims held by other workers are still within
    their lease, it returns how long to wait before sweeping again (handled by the task)."""
    audits = Audit.objects.filter(status=Audit.Status.RUNNING)
    if audit_id is not None:
        audits = audits.filter(pk=audit_id)
    sent = 0
    for audit in audits:
        with transaction.atomic():
            sent += _enqueue_batches(audit, _claimable_ids(audit.pk))
        audit_refresh_status(audit_id=audit.pk)
    return sent


def audit_sweep_schedule(*, audit_id: int | None = None, force: bool = False) -> int:
    """While claims of running dialogues are alive, sweep again when the soonest lease runs out, so
    work held by a worker that dies is taken up without anyone watching. One pending sweep per audit
    (`next_sweep_at`); `force` ignores that (a starting worker cannot trust a sweep a dead one held).
    Returns the number of sweeps scheduled."""
    from audits.tasks import audit_sweep_task

    audits = Audit.objects.filter(status=Audit.Status.RUNNING)
    if audit_id is not None:
        audits = audits.filter(pk=audit_id)
    scheduled = 0
    for pk in audits.values_list("pk", flat=True):
        if audit_refresh_status(audit_id=pk) != Audit.Status.RUNNING:
            continue
        delay = audit_next_lease_expiry(audit_id=pk)
        if delay is None:
            continue
        now = timezone.now()
        countdown = delay + 1.0
        due = Audit.objects.filter(pk=pk, status=Audit.Status.RUNNING)
        if not force:
            due = due.filter(Q(next_sweep_at__isnull=True) | Q(next_sweep_at__lt=now))
        if due.update(next_sweep_at=now + timedelta(seconds=countdown)):
            audit_sweep_task.apply_async((pk,), countdown=countdown, queue=audit_task_queue())
            scheduled += 1
    return scheduled


def audit_next_lease_expiry(*, audit_id: int) -> float | None:
    """Seconds until the earliest lease of a running dialogue expires (None when nothing runs)."""
    soonest = (
        Dialogue.objects.filter(audit_id=audit_id, status=Dialogue.Status.RUNNING)
        .order_by("lease_until")
        .values_list("lease_until", flat=True)
        .first()
    )
    if soonest is None:
        return None
    return max(0.0, (soonest - timezone.now()).total_seconds())


CLONE_FACTORS = ("student_endpoint", "judge_endpoint", "judge_template", "seed", "tutors", "check_endpoint")


@transaction.atomic
def audit_clone(*, audit: Audit, change: dict, created_by=None, name: str = "") -> Audit:
    """A copy of the audit with exactly one factor changed. Unchanged calls come from the ledger.

    `change` holds one of: student_endpoint, judge_endpoint, check_endpoint, judge_template (PromptTemplate),
    seed (int), tutors (list of endpoints).
    """
    if len(change) != 1 or next(iter(change)) not in CLONE_FACTORS:
        raise ValueError(f"change exactly one of: {', '.join(CLONE_FACTORS)}")
    factor, value = next(iter(change.items()))
    fields = {
        "student_endpoint": audit.student_endpoint,
        "judge_endpoint": audit.judge_endpoint,
        "check_endpoint": audit.check_endpoint,
        "seed": audit.seed,
    }
    templates = {
        "tutor": audit.tutor_template,
        "tutor_informed": audit.tutor_informed_template,
        "student": audit.student_template,
        "judge": audit.judge_template,
        "check": audit.check_template,
    }
    tutors = list(audit.tutors.all())
    if factor == "tutors":
        tutors = list(value)
        described = ", ".join(str(t) for t in tutors)
    elif factor == "judge_template":
        templates["judge"] = value
        described = str(value)
    else:
        fields[factor] = value
        described = str(value)
    clone = audit_create(
        name=name or f"{audit.name} · {factor.replace('_', ' ')}: {described}",
        description=audit.description,
        tutors=tutors,
        questions=audit.questions.all(),
        conditions=[{f: getattr(c, f) for f in CONDITION_FIELDS} for c in audit.conditions.all()],
        t_max=audit.t_max,
        answer_precheck=audit.answer_precheck,
        max_reasks=audit.max_reasks,
        templates=templates,
        question_selection=audit.question_selection,
        design=audit.design,
        batch_size=audit.batch_size,
        created_by=created_by,
        **fields,
    )
    Audit.objects.filter(pk=clone.pk).update(cloned_from=audit, clone_change=f"{factor} → {described}"[:200])
    clone.refresh_from_db()
    return clone


# --- running dialogues ---------------------------------------------------------------------------


def _retry_policy() -> RetryPolicy:
    return RetryPolicy(**settings.AUDIT_RETRY_POLICY)


def engine_client(runtime: LoopRuntime) -> LLMClient:
    """The process's one client (created on the runtime's loop, on first use). Its endpoints' rate
    budgets are shared with the other worker processes, and its limits are reported for the audit page."""
    client = runtime.state.get("client")
    if client is None:
        from audits.services.rate_limits import limit_statuses_start, rate_limit_store

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
        .filter(Q(status=Dialogue.Status.PENDING) | Q(status=Dialogue.Status.RUNNING, lease_until__lt=now))
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
        max_reasks=plan.max_reasks,
        solution=q["solution"] or "",
        origin={"audit_id": plan.audit_id},
    )


def _claim(audit_id: int, dialogue_id: int, token: str, lease: int) -> bool:
    now = timezone.now()
    claimed = (
        Dialogue.objects.filter(pk=dialogue_id, audit_id=audit_id, audit__status=Audit.Status.RUNNING)
        .filter(Q(status=Dialogue.Status.PENDING) | Q(status=Dialogue.Status.RUNNING, lease_until__lt=now))
        .update(
            status=Dialogue.Status.RUNNING,
            claimed_by=token,
            lease_until=now + timedelta(seconds=lease),
            runs=F("runs") + 1,
            started_at=now,
        )
    )
    return claimed == 1


def _renew(token: str, lease: int) -> int:
    return Dialogue.objects.filter(claimed_by=token, status=Dialogue.Status.RUNNING).update(
        lease_until=timezone.now() + timedelta(seconds=lease)
    )


def _finish(dialogue_id: int, token: str, outcome: DialogueOutcome, rubric_id: int) -> bool:
    """Write the dialogue's turns, scores and calls with its new status, if the claim still holds."""
    result = outcome.result
    failed = result.end_reason == END_ERROR
    with transaction.atomic():
        updated = Dialogue.objects.filter(pk=dialogue_id, status=Dialogue.Status.RUNNING, claimed_by=token).update(
            status=Dialogue.Status.FAILED if failed else Dialogue.Status.DONE,
            end_reason=result.end_reason,
            error=result.error[:2000],
            metrics=outcome.metrics,
            calls_sent=outcome.calls_sent,
            calls_cached=outcome.calls_cached,
            finished_at=timezone.now(),
            lease_until=None,
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
    from audits.judge import METRICS

    return list(judgement.scores) if judgement.scores else list(METRICS)


def _release(dialogue_id: int, token: str, error: str) -> None:
    """A dialogue whose run raised (a bug, not a model failure) is marked failed with the error."""
    Dialogue.objects.filter(pk=dialogue_id, claimed_by=token, status=Dialogue.Status.RUNNING).update(
        status=Dialogue.Status.FAILED, end_reason=END_ERROR, error=error[:2000], lease_until=None
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
    token = f"{worker}:{uuid.uuid4().hex[:12]}"
    lease = claim_lease_seconds()
    counts = {"claimed": 0, "done": 0, "lost": 0, "skipped": 0, "errors": 0}
    status = {"value": plan.status}

    async def keep_leases() -> None:
        while True:
            await asyncio.sleep(max(1.0, lease / 3))
            await runtime.run_blocking(_renew, token, lease)
            status["value"] = await runtime.run_blocking(_audit_status, audit_id)

    async def one(item: dict) -> None:
        if status["value"] != Audit.Status.RUNNING:
            counts["skipped"] += 1
            return
        if not await runtime.run_blocking(_claim, audit_id, item["id"], token, lease):
            counts["skipped"] += 1
            return
        counts["claimed"] += 1
        try:
            outcome = await dialogue_execute(_dialogue_job(plan, item), client, endpoints_by_tutor[item["tutor_id"]])
        except Exception as exc:  # a bug must not take the batch down; the dialogue shows the error
            logger.exception("dialogue %s raised", item["id"])
            counts["errors"] += 1
            await runtime.run_blocking(_release, item["id"], token, f"{type(exc).__name__}: {exc}")
            return
        written = await runtime.run_blocking(_finish, item["id"], token, outcome, plan.judge_rubric_id)
        counts["done" if written else "lost"] += 1

    renewer = asyncio.create_task(keep_leases())
    try:
        await asyncio.gather(*(one(item) for item in plan.dialogues))
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
        with transaction.atomic():
            audit_dialogues_create(audit=audit)
            _mark_templates_used(audit)
            Audit.objects.filter(pk=audit.pk).update(status=Audit.Status.RUNNING, launched_at=timezone.now())
    while True:
        ids = _claimable_ids(audit.pk)
        if not ids or _audit_status(audit.pk) != Audit.Status.RUNNING:
            break
        for start in range(0, len(ids), audit.batch_size):
            dialogue_batch_run(audit_id=audit.pk, dialogue_ids=ids[start : start + audit.batch_size], worker="inline")
            if progress is not None:
                progress()
    return audit_refresh_status(audit_id=audit.pk)


__all__ = [
    "audit_cancel",
    "audit_clone",
    "audit_create",
    "audit_dialogues_create",
    "audit_launch",
    "audit_pause",
    "audit_refresh_status",
    "audit_resume",
    "audit_retry_failed",
    "audit_run_inline",
    "audit_sweep",
    "default_template",
    "dialogue_batch_run",
    "endpoint_connection_test",
]


def audit_create_from_design(
    *,
    name: str,
    tutors: Sequence[ModelEndpoint],
    student_endpoint: ModelEndpoint,
    judge_endpoint: ModelEndpoint,
    selection: dict,
    choice: dict,
    **options,
) -> Audit:
    """An audit from a question selection (`audits.design.QuestionSelection` fields) and a condition
    choice (`audits.conditions.ConditionChoice` fields), over the design tables (or the defaults) — the
    same conditions the design preview shows for that choice (`audits.selectors.design.design_conditions`)."""
    from audits.conditions import ConditionChoice
    from audits.design import QuestionSelection, select_questions
    from audits.selectors.design import design_conditions, question_ids_by_domain

    selection = {k: v for k, v in selection.items() if v not in (None, "")}
    domains = tuple(selection.pop("domains", ()) or ())
    ids_by_domain = question_ids_by_domain(domains=list(domains) or None)
    picked = select_questions(ids_by_domain, QuestionSelection(domains=domains or tuple(ids_by_domain), **selection))
    question_ids = [pk for ids in picked.values() for pk in ids]
    if not question_ids:
        raise ValueError("the selection holds no questions; import some first")
    tuple_fields = ("explicit_dimensions", "intersectional_dimensions", "implicit_rows", "opposite_levels")
    choice = {k: tuple(v) if k in tuple_fields else v for k, v in choice.items()}
    specs = design_conditions(choice=ConditionChoice(**choice))
    return audit_create(
        name=name,
        tutors=tutors,
        student_endpoint=student_endpoint,
        judge_endpoint=judge_endpoint,
        questions=Question.objects.filter(pk__in=question_ids),
        conditions=specs,
        question_selection={"domains": list(domains), **selection},
        design={k: list(v) if isinstance(v, tuple) else v for k, v in choice.items()},
        **options,
    )
