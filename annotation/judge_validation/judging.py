"""Judging runs of a validation project: a judge endpoint on its sampled turns under one rubric version, on a worker.

A judging run is queued by the page or the API, both show its progress, and its task (annotation.tasks) calls
`judge_validation_run`.

The turns are judged by the audits' one function for it (`audit_source.judgements_run`, over the engine's
own judge call, through the ledger; through the Batch API when the judge endpoint is batch-capable): a call
already answered is never sent again, so re-running costs only what changed (a new rubric text, a new
judge). Turns of the source audit are read as the engine read them (`audit_source.turns_to_judge`);
imported items (MRBench-style) bring their dialogue with them.
"""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from annotation.judge_validation import audit_source, services
from annotation.judge_validation.audit_source import PURPOSE_JUDGE
from annotation.models import Item, JudgeScore, JudgeValidation

TASK_NAME = "annotation.judge_validation_run"

__all__ = [
    "PURPOSE_JUDGE",
    "judge_run",
    "judge_run_cancel",
    "judge_run_start",
    "judge_run_state",
    "judge_validation_add",
    "judge_validation_run",
]


def _imported_turns(items: list[Item]) -> dict:
    """Items imported with their own dialogue (MRBench-style): metadata["judge_input"] holds it."""
    return {
        item.pk: audit_source.imported_turn_to_judge(
            judge_input=item.metadata.get("judge_input") or {}, sample_key=f"item:{item.external_id}"
        )
        for item in items
    }


def _validation_items(validation: JudgeValidation) -> list[Item]:
    return list(validation.project.items.filter(metadata__role__in=["sample", "imported"]).order_by("id"))


def judge_run_owner(validation: JudgeValidation) -> str:
    return f"judge_validation:{validation.pk}"


def judge_run_start(*, validation: JudgeValidation):
    """Queue the judge's run on the sampled turns (one open run per validation); returns the JudgeRun."""
    endpoint = audit_source.judge_endpoint(validation.judge_endpoint_id)
    return audit_source.judge_run_open(
        owner=judge_run_owner(validation),
        task_name=TASK_NAME,
        task_args={"validation_id": validation.pk},
        endpoint=endpoint,
        total=len(_validation_items(validation)),
        description=f"{validation.judge_name} on {validation.rubric.label} ({validation.project})",
    )


def judge_run_state(validation: JudgeValidation) -> dict | None:
    """The validation's latest judging run as the page and the API show it (None: never run)."""
    return audit_source.judge_run_state(owner=judge_run_owner(validation))


def judge_run_cancel(validation: JudgeValidation) -> dict:
    """Cancel the validation's open judging run (`audit_source.judge_run_cancel`: a running batch is cancelled
    at the provider); raises ValueError saying why it cannot be. Returns the run as the page shows it."""
    run = judge_run_state(validation)
    if run is None:
        raise ValueError(f"{validation.judge_name} has no judging run to cancel")
    audit_source.judge_run_cancel(run_id=run["id"])
    return judge_run_state(validation)


def judge_validation_run(*, run_id: int) -> str:
    """The task's body: claim the run and score the validation's sampled turns."""

    def body(run, keep_alive) -> dict:
        validation = JudgeValidation.objects.get(pk=run.task_args["validation_id"])
        return judge_run(validation=validation, run=run, keep_alive=keep_alive)

    return audit_source.judge_run_execute(run_id=run_id, body=body)


def judge_run(
    *, validation: JudgeValidation, max_reasks: int = audit_source.DEFAULT_MAX_REASKS, run=None, keep_alive=None
) -> dict:
    """Score every sampled item of the project with the validation's judge under its rubric version and
    store the scores in one transaction. Blocking: the worker runs it (`judge_validation_run`); within a
    run whose judge is batch-capable the turns go through the Batch API. Returns counts of calls."""
    project = validation.project
    endpoint = audit_source.judge_endpoint(validation.judge_endpoint_id)
    template = audit_source.judge_template(validation.rubric.judge_template_id)
    items = _validation_items(validation)
    by_turn = {i.source_turn_id: i.pk for i in items if i.source_turn_id and project.source_audit_id}
    turns = {by_turn[turn_id]: turn for turn_id, turn in audit_source.turns_to_judge(turn_ids=list(by_turn)).items()}
    turns.update(_imported_turns([i for i in items if not i.source_turn_id]))
    result = audit_source.judgements_run(
        turns=turns,
        judge_endpoint=endpoint,
        template_text=template.text,
        max_reasks=max_reasks,
        allowed=template.judge_allowed_values,
        run=run,
        keep_alive=keep_alive,
    )
    if keep_alive is not None:
        keep_alive()
    audit_source.prompt_template_mark_used(template)
    rows = []
    for item_id, judgement in result.judgements.items():
        last_call = judgement.call_ids[-1] if judgement.call_ids else None
        for metric in audit_source.JUDGE_METRICS:
            rows.append(
                JudgeScore(
                    validation=validation,
                    item_id=item_id,
                    metric=metric,
                    value=judgement.scores.get(metric) if judgement.status == audit_source.JUDGEMENT_OK else None,
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
            calls_sent=result.calls_sent,
            calls_cached=result.calls_cached,
        )
    validation.refresh_from_db()
    return {
        "items": len(turns),
        "calls_sent": result.calls_sent,
        "calls_cached": result.calls_cached,
        **audit_source.judgement_counts(result.judgements.values()),
    }


def judge_validation_add(*, project, endpoint, rubric) -> tuple[JudgeValidation, object | None]:
    """Validate a judge endpoint under a rubric version on the project's labels (idempotent): the audit's
    own judge under its own rubric is copied from the audit at once; any other (endpoint, rubric), or a
    re-run, is queued on a worker. Returns the validation and its run (None when copied)."""
    validation = services.judge_validation_create(project=project, judge_endpoint=endpoint, rubric=rubric)
    audit = audit_source.audit_by_id(project.source_audit_id)
    if audit and endpoint.pk == audit.judge_endpoint_id and rubric.judge_template_id == audit.judge_template_id:
        if not validation.scores.exists():
            services.audit_scores_copy(validation=validation, audit=audit)
        return validation, None
    return validation, judge_run_start(validation=validation)
