"""Writes that steer an audit through its life, from creation and launch to retries, clones and sweeps.

Create it (from its parts or from a design), launch, pause, resume, cancel, retry its failed dialogues, clone it with
one factor changed; the sweep that sends again the work a dead worker held, and the status refresh that finishes an
audit with no open work.

The database is the truth. `audit_launch` creates every Dialogue row idempotently and, on commit, sends
batches of dialogue ids to the workers, which run them (`audits.services.dialogue_batches`); progress is a
count of rows, so a batch sent twice or lost with its worker costs nothing but time.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Sequence
from datetime import timedelta

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from audits.conditions import ConditionChoice
from audits.design import QuestionSelection, select_questions
from audits.endpoint_roles import JUDGE, STUDENT, TUTOR, role_refusal
from audits.judge import DEFAULT_MAX_REASKS
from audits.models import Audit, Condition, Dialogue, ModelEndpoint, PromptTemplate, Question, Turn
from audits.selectors.design import design_conditions, question_ids_by_domain
from audits.services.analysis import analysis_start
from audits.services.design import default_template
from audits.services.leases import lease_claimable, lease_soonest
from audits.services.planner_statistics import planner_statistics_refresh
from audits.services.task_queue import AUDIT_RUN_BATCH, AUDIT_SWEEP, audit_task_queue, task_send

# --- conditions ----------------------------------------------------------------------------------

# The fields of a `ConditionChoice` that are tuples (lists once stored as an audit's design).
_TUPLE_CHOICES = ("explicit_dimensions", "intersectional_dimensions", "implicit_rows", "opposite_levels")
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


# --- creating audits -----------------------------------------------------------------------------


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
    max_reasks: int = DEFAULT_MAX_REASKS,
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
    for role, endpoints in (
        (TUTOR, tutors),
        (STUDENT, [student_endpoint]),
        (JUDGE, [judge_endpoint, *([check_endpoint] if check_endpoint else [])]),
    ):
        refusal = role_refusal(role=role, endpoints=endpoints)
        if refusal:
            raise ValueError(refusal)
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
    selection = {k: v for k, v in selection.items() if v not in (None, "")}
    domains = tuple(selection.pop("domains", ()) or ())
    ids_by_domain = question_ids_by_domain(domains=list(domains) or None)
    picked = select_questions(ids_by_domain, QuestionSelection(domains=domains or tuple(ids_by_domain), **selection))
    question_ids = [pk for ids in picked.values() for pk in ids]
    if not question_ids:
        raise ValueError("the selection holds no questions; import some first")
    choice = {k: tuple(v) if k in _TUPLE_CHOICES else v for k, v in choice.items()}
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


# --- steering audits -----------------------------------------------------------------------------


def _enqueue_batches(audit: Audit, dialogue_ids: list[int]) -> int:
    batches = [dialogue_ids[i : i + audit.batch_size] for i in range(0, len(dialogue_ids), audit.batch_size)]
    queue = audit_task_queue()
    for batch in batches:
        transaction.on_commit(lambda b=batch: task_send(AUDIT_RUN_BATCH, (audit.pk, b), queue=queue))
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
    if audit.status == Audit.Status.FINISHED and not audit_claimable_dialogue_ids(audit_id=audit.pk):
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


@transaction.atomic
def audit_start_inline(*, audit: Audit) -> None:
    """Make a draft audit running, its dialogues created, without sending anything to the workers: the
    caller runs the work in its own process (`audits.services.dialogue_batches.audit_run_inline`)."""
    audit_dialogues_create(audit=audit)
    _mark_templates_used(audit)
    Audit.objects.filter(pk=audit.pk).update(status=Audit.Status.RUNNING, launched_at=timezone.now())


def audit_resume_inline(*, audit: Audit) -> None:
    """Make a paused audit running again without sending anything to the workers: the caller runs the work in its
    own process (`audits.services.dialogue_batches.audit_run_inline`)."""
    Audit.objects.filter(pk=audit.pk, status=Audit.Status.PAUSED).update(status=Audit.Status.RUNNING)
    audit.refresh_from_db()


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
    return _enqueue_batches(audit, audit_claimable_dialogue_ids(audit_id=audit.pk))


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
    failed.update(status=Dialogue.Status.PENDING, end_reason="", error="", claim_token="", lease_until=None)
    Audit.objects.filter(pk=audit.pk).update(status=Audit.Status.RUNNING, finished_at=None)
    audit.refresh_from_db()
    return _enqueue_batches(audit, ids)


def audit_claimable_dialogue_ids(*, audit_id: int) -> list[int]:
    """Ids of the audit's dialogues a worker may claim: pending, or running under a lease that ran out."""
    now = timezone.now()
    return list(
        Dialogue.objects.filter(audit_id=audit_id)
        .filter(lease_claimable([Dialogue.Status.PENDING], now))
        .order_by("pk")
        .values_list("pk", flat=True)
    )


def audit_refresh_status(*, audit_id: int) -> str:
    """A running audit with nothing pending or running is finished (compare-and-swap on the status); the
    call that finishes it refreshes the planner's statistics and queues its default analysis on commit, so the
    results are ready, and read by the audit's indexes, when opened."""
    open_work = Dialogue.objects.filter(
        audit_id=audit_id, status__in=[Dialogue.Status.PENDING, Dialogue.Status.RUNNING]
    ).exists()
    if not open_work:
        finished = Audit.objects.filter(pk=audit_id, status=Audit.Status.RUNNING).update(
            status=Audit.Status.FINISHED, finished_at=timezone.now()
        )
        if finished == 1:
            transaction.on_commit(planner_statistics_refresh)  # before the pages and the analysis read the audit
            transaction.on_commit(lambda: analysis_start(audit_id=audit_id))
    return Audit.objects.filter(pk=audit_id).values_list("status", flat=True).first() or ""


# --- sweeping: work a dead worker held -----------------------------------------------------------


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
            sent += _enqueue_batches(audit, audit_claimable_dialogue_ids(audit_id=audit.pk))
        audit_refresh_status(audit_id=audit.pk)
    return sent


def audit_sweep_schedule(*, audit_id: int | None = None, force: bool = False) -> int:
    """While claims of running dialogues are alive, sweep again when the soonest lease runs out, so
    work held by a worker that dies is taken up without anyone watching. One pending sweep per audit
    (`next_sweep_at`); `force` ignores that (a starting worker cannot trust a sweep a dead one held).
    Returns the number of sweeps scheduled."""
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
            task_send(AUDIT_SWEEP, (pk,), countdown=countdown, queue=audit_task_queue())
            scheduled += 1
    return scheduled


def audit_next_lease_expiry(*, audit_id: int) -> float | None:
    """Seconds until the earliest lease of a running dialogue expires (None when nothing runs)."""
    soonest = lease_soonest(Dialogue.objects.filter(audit_id=audit_id))
    if soonest is None:
        return None
    return max(0.0, (soonest - timezone.now()).total_seconds())


# --- cloning -------------------------------------------------------------------------------------


CLONE_FACTORS = (
    "student_endpoint",
    "judge_endpoint",
    "judge_template",
    "seed",
    "tutors",
    "check_endpoint",
    "conditions",
)


def conditions_described(choice: ConditionChoice) -> str:
    """A condition choice in words, for a clone's name and its one change."""
    parts = ["control"] if choice.control else []
    if choice.explicit_dimensions:
        parts.append(f"explicit {'/'.join(choice.explicit_dimensions)}")
    if choice.intersectional_dimensions:
        parts.append(f"intersectional {' × '.join(choice.intersectional_dimensions)}")
    if choice.implicit:
        names = f"{choice.names_per_cell} per cell" if choice.names_per_cell else "every name"
        parts.append(f"implicit names ({names}{', told to the tutor' if choice.tell_tutor_name else ''})")
    if choice.opposite:
        parts.append("opposite 2 × 2")
    return ", ".join(parts) or "no condition"


@transaction.atomic
def audit_clone(*, audit: Audit, change: dict, created_by=None, name: str = "") -> Audit:
    """A copy of the audit with exactly one factor changed. Unchanged calls come from the ledger.

    `change` holds one of: student_endpoint, judge_endpoint, check_endpoint, judge_template (PromptTemplate),
    seed (int), tutors (list of endpoints), conditions (a `ConditionChoice`, drawn over the design tables as the
    launch form draws it, its names seeded by the audit's seed).
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
    conditions = [{f: getattr(c, f) for f in CONDITION_FIELDS} for c in audit.conditions.all()]
    design = audit.design
    if factor == "conditions":
        choice = dataclasses.replace(value, seed=audit.seed)
        specs = design_conditions(choice=choice)
        if len(specs) < 2:
            raise ValueError("these conditions leave nothing to compare: choose at least two")
        if {condition_values(spec)["key"] for spec in specs} == {c["key"] for c in conditions}:
            raise ValueError("these are the audit's own conditions: change at least one")
        conditions = specs
        design = {
            **(audit.design or {}),
            **{k: list(v) if k in _TUPLE_CHOICES else v for k, v in dataclasses.asdict(choice).items()},
        }
        described = conditions_described(choice)
    elif factor == "tutors":
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
        conditions=conditions,
        t_max=audit.t_max,
        answer_precheck=audit.answer_precheck,
        max_reasks=audit.max_reasks,
        templates=templates,
        question_selection=audit.question_selection,
        design=design,
        batch_size=audit.batch_size,
        created_by=created_by,
        **fields,
    )
    Audit.objects.filter(pk=clone.pk).update(cloned_from=audit, clone_change=f"{factor} → {described}"[:200])
    clone.refresh_from_db()
    return clone
