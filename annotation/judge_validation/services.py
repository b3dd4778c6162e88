"""Writes of judge validation: validation projects, rubric versions, judge validations, verdicts and workshops.

They cover a validation project from an audit in one action, rubric versions, the validations of judge endpoints (with
their scores), recording verdicts, the persona-cue setting, and rubric-refinement workshops that produce the next rubric
version and a re-labelling stage.

A validation project has one labelling stage (3 annotators per item, discussion then senior reviewer) whose
questions are the rubric's five metrics. Its items are the sampled tutor turns; a second, smaller set of
turns (never in the sample) is kept for training: the researcher gives them gold labels and draws the
pilot and the qualification test from them on the stage page, as for any stage (the training gate).
"""

from __future__ import annotations

import math
from datetime import date

from django.db import transaction
from django.utils import timezone

from annotation.judge_validation import rubric as rubric_spec
from annotation.judge_validation.audit_source import (
    TemplateTextError,
    audit_judge_scores,
    audit_turn_candidates,
    audit_turns,
    judge_template,
    prompt_template_revise,
    turn_item_payload,
)
from annotation.judge_validation.sampling import StratifiedSample, stratified_sample
from annotation.models import (
    AnnotationProject,
    Enrollment,
    Item,
    JudgeScore,
    JudgeValidation,
    LabelQuestion,
    RubricVersion,
    RubricWorkshop,
    Stage,
)
from annotation.selectors.judge_validation import ROLE_MAIN, sampled_items, validation_report, validation_stage
from annotation.services.enrollment import enrollment_create
from annotation.services.labelling import stage_item_rule_set, stage_main_open
from annotation.services.projects import project_create, question_create, stage_create
from annotation.services.training import SetupError, enrollment_gate_record, guideline_publish

DEFAULT_SAMPLE_SIZE = 180  # EduFair-Bench validated its judge on 180 tutor turns
DEFAULT_TRAINING_POOL = 20  # turns kept apart for the pilot and the qualification test
DEFAULT_OVERLAP = 3
ROLE_TRAINING = "training"


class JudgeValidationRefused(SetupError):
    """A judge-validation request the data cannot support (the message says why)."""


# --- Rubric versions ------------------------------------------------------------------------------


def rubric_version_for_template(*, template, guideline: str = "", by=None) -> RubricVersion:
    """The rubric version of a judge_rubric template, made on first use with the default guideline (or, for
    a template revised outside a workshop, the guideline of the version it was revised from)."""
    found = RubricVersion.objects.filter(judge_template_id=template.pk).first()
    if found is not None:
        return found
    previous = RubricVersion.objects.filter(judge_template_id=template.previous_id).first()
    return RubricVersion.objects.create(
        judge_template_id=template.pk,
        name=template.name,
        version=template.version,
        guideline=guideline or (previous.guideline if previous else rubric_spec.DEFAULT_GUIDELINE),
        previous=previous,
        change_note="" if previous is None else "Revised outside a workshop; guideline carried over.",
        created_by=by,
    )


# --- Creating the project -------------------------------------------------------------------------


def _items_from_turns(
    project, turn_ids: list[int], strata: dict[int, dict], role: str, hide: bool, probability: dict[int, float]
) -> list[Item]:
    by_id = audit_turns(turn_ids)
    items = []
    for turn_id in turn_ids:
        turn = by_id[turn_id]
        info = strata[turn_id]
        items.append(
            Item(
                project=project,
                external_id=f"turn-{turn_id}",
                payload=turn_item_payload(turn, hide_persona_cue=hide),
                subject=info["domain"],
                # Category stays blank: the condition kind or the tutor would tell annotators what is hidden.
                category="",
                modality=Item.Modality.MULTI_TURN if turn.index > 0 else Item.Modality.SINGLE_TURN,
                source_turn_id=turn_id,
                # Never shown to annotators (see AnnotatorItemSerializer); no persona text is kept here.
                metadata={
                    "role": role,
                    "audit_id": turn.dialogue.audit_id,
                    "dialogue_id": turn.dialogue_id,
                    "turn_index": turn.index,
                    "tutor_id": turn.dialogue.tutor_id,
                    "tutor": info["tutor"],
                    "domain": info["domain"],
                    "condition_id": info["condition_id"],
                    "condition_kind": info["condition_kind"],
                    "question_id": info["question_id"],
                    # The chance the turn had of being drawn (its stratum's): judge-corrected contrasts weight
                    # its human label by 1 / this. Training turns were drawn from what the sample left.
                    "inclusion_probability": probability.get(turn_id),
                },
            )
        )
    return Item.objects.bulk_create(items)


def _allocation_rows(sample: StratifiedSample, strata_names: dict[tuple, dict]) -> list[dict]:
    rows = []
    for row in sample.allocation:
        names = strata_names[row.stratum]
        rows.append(
            {
                "tutor_id": row.stratum[0],
                "tutor": names["tutor"],
                "domain": row.stratum[1],
                "condition_id": row.stratum[2],
                "condition": names["condition"],
                "condition_kind": names["condition_kind"],
                "available": row.available,
                "exact_share": row.exact_share,  # exact; pages round it for display
                "chosen": row.chosen,
                "inclusion_probability": row.inclusion_probability,
            }
        )
    return rows


def _inclusion_probabilities(sample: StratifiedSample, stratum_of: dict[int, tuple]) -> dict[int, float]:
    by_stratum = {row.stratum: row.inclusion_probability for row in sample.allocation}
    return {turn_id: by_stratum[stratum_of[turn_id]] for turn_id in sample.ids}


@transaction.atomic
def validation_project_create(
    *,
    audit,
    size: int = DEFAULT_SAMPLE_SIZE,
    seed: int = 0,
    per_stratum: int | None = None,
    hide_persona_cue: bool = True,
    overlap: int = DEFAULT_OVERLAP,
    training_pool: int = DEFAULT_TRAINING_POOL,
    human_alpha_min: float = 0.80,
    judge_agreement_min: float = 0.80,
    name: str = "",
    by=None,
) -> AnnotationProject:
    """The judge-validation project of an audit, in one action: a stratified sample of its scored tutor
    turns as items, the rubric's five metrics as questions, one stage with the rubric's guideline, and a
    validation of the audit's own judge under the audit's rubric version (its scores copied in).

    The sample is stratified by tutor × domain × condition: ``size`` turns in proportion to the strata, or,
    with ``per_stratum``, that many turns from every stratum (all of a smaller one's), ``size`` then unused.
    Each stratum's inclusion probability (chosen / available) is recorded in the allocation and on its items."""
    if per_stratum is not None and per_stratum < 1:
        raise JudgeValidationRefused("Each stratum needs at least one turn.")
    if per_stratum is None and size < 1:
        raise JudgeValidationRefused("The sample needs at least one turn.")
    candidates = audit_turn_candidates(audit)
    if not candidates:
        raise JudgeValidationRefused("The audit has no scored tutor turn yet; run it first.")
    info = {c.id: extra for c, extra in candidates}
    strata_names = {c.stratum: extra for c, extra in candidates}
    stratum_of = {c.id: c.stratum for c, _ in candidates}
    sample = stratified_sample([c for c, _ in candidates], size, seed, per_stratum=per_stratum)
    chosen = set(sample.ids)
    leftover = [c for c, _ in candidates if c.id not in chosen]
    training = stratified_sample(leftover, min(training_pool, len(leftover)), seed + 1) if leftover else None
    how = (
        f"{per_stratum} per tutor × domain × condition"
        if per_stratum is not None
        else "in proportion to tutor × domain × condition"
    )

    rubric = rubric_version_for_template(template=audit.judge_template, by=by)
    domains = sorted({extra["domain"] for _, extra in candidates})
    project = project_create(
        name=name or f"Judge validation: {audit.name} ({rubric.label})",
        description=(
            f"Humans label {len(sample.ids)} tutor turns of audit #{audit.pk}, sampled {how} (seed {seed}), on the "
            "judge's five metrics; the report compares the judge with them."
        ),
        kind=AnnotationProject.Kind.JUDGE_VALIDATION,
        subjects=domains,
        source_audit_id=audit.pk,
        by=by,
    )
    project.options = {
        "hide_persona_cue": bool(hide_persona_cue),
        "sample": {
            "mode": sample.mode,
            "per_stratum": per_stratum,
            "size_requested": sample.size_requested,
            "size": len(sample.ids),
            "seed": seed,
            "strata": "tutor × domain × condition",
            "allocation": _allocation_rows(sample, strata_names),
        },
        "rubric_version_id": rubric.pk,
    }
    project.save(update_fields=["options"])
    questions = [question_create(project=project, **spec) for spec in rubric_spec.question_specs()]
    # The training turns are split between the pilot and the qualification test (gate: ≥ 80 % on each).
    pilot_size = max(1, training_pool // 2)
    qualification_size = max(1, training_pool - pilot_size)
    stage = stage_create(
        project=project,
        name=f"Rate tutor turns ({rubric.label})",
        task="Rate the highlighted tutor turn on the rubric's five questions.",
        pool="Annotators trained on the rubric's guideline",
        questions=questions,
        overlap=overlap,
        resolution_policy=Stage.Resolution.DISCUSSION_SENIOR,
        pilot_size=pilot_size,
        qualification_size=qualification_size,
        qualification_min_correct=math.ceil(0.8 * qualification_size),
    )
    guideline_publish(stage=stage, text=rubric.guideline, change_note=f"The guideline of {rubric.label}.", by=by)
    main_items = _items_from_turns(
        project, sample.ids, info, ROLE_MAIN, hide_persona_cue, _inclusion_probabilities(sample, stratum_of)
    )
    if training is not None and training.ids:
        _items_from_turns(project, training.ids, info, ROLE_TRAINING, hide_persona_cue, {})
    _open_main_items(stage, main_items)
    validation = judge_validation_create(
        project=project,
        judge_endpoint=audit.judge_endpoint,
        rubric=rubric,
        human_alpha_min=human_alpha_min,
        judge_agreement_min=judge_agreement_min,
    )
    audit_scores_copy(validation=validation, audit=audit)
    return project


def _open_main_items(stage: Stage, items: list[Item]) -> None:
    """Only the sampled turns are main work (the training turns are not), in sample order: the stage's item
    rule is the explicit list of them, and its main labelling opens with it."""
    stage_item_rule_set(stage=stage, rule="list", item_ids=[item.pk for item in items])
    stage_main_open(stage=stage)


@transaction.atomic
def persona_visibility_set(*, project: AnnotationProject, hidden: bool) -> int:
    """Hide or show the persona cue: every turn item's payload is rebuilt from its transcript."""
    project.options = {**project.options, "hide_persona_cue": bool(hidden)}
    project.save(update_fields=["options"])
    changed = 0
    items = list(project.items.filter(source_turn_id__isnull=False))
    by_id = audit_turns(i.source_turn_id for i in items)
    for item in items:
        turn = by_id.get(item.source_turn_id)
        if turn is None:
            continue
        item.payload = turn_item_payload(turn, hide_persona_cue=hidden)
        changed += 1
    Item.objects.bulk_update(items, ["payload"])
    return changed


# --- Validations of judges ------------------------------------------------------------------------


@transaction.atomic
def judge_validation_create(
    *,
    project: AnnotationProject,
    judge_endpoint=None,
    rubric: RubricVersion,
    judge_name: str = "",
    human_alpha_min: float | None = None,
    judge_agreement_min: float | None = None,
) -> JudgeValidation:
    """A validation of one judge endpoint under one rubric version on the project's labels (idempotent).
    Thresholds default to those of the project's first validation, else 0.80 and 0.80."""
    first = project.judge_validations.order_by("id").first()
    defaults = {
        "audit_id": project.source_audit_id,
        "judge_name": judge_name or (judge_endpoint.name if judge_endpoint is not None else "imported"),
        "human_alpha_min": human_alpha_min
        if human_alpha_min is not None
        else (first.human_alpha_min if first else 0.8),
        "judge_agreement_min": judge_agreement_min
        if judge_agreement_min is not None
        else (first.judge_agreement_min if first else 0.8),
    }
    validation, _ = JudgeValidation.objects.get_or_create(
        project=project,
        judge_endpoint_id=judge_endpoint.pk if judge_endpoint is not None else None,
        rubric=rubric,
        defaults=defaults,
    )
    return validation


@transaction.atomic
def audit_scores_copy(*, validation: JudgeValidation, audit) -> int:
    """The audit's own judge scores (same endpoint, same rubric) need no new call: copy them in."""
    if validation.judge_endpoint_id != audit.judge_endpoint_id:
        raise JudgeValidationRefused("Only the audit's own judge has scores in the audit.")
    rubric_template_id = validation.rubric.judge_template_id
    if rubric_template_id != audit.judge_template_id:
        raise JudgeValidationRefused("The audit was judged under another rubric version; re-run the judge instead.")
    items = {i.source_turn_id: i for i in validation.project.items.filter(metadata__role=ROLE_MAIN)}
    rows = audit_judge_scores(turn_ids=list(items), rubric_template_id=rubric_template_id)
    scores = [
        JudgeScore(
            validation=validation,
            item=items[row.turn_id],
            metric=row.metric,
            value=row.value,
            status=row.status,
            llm_call_id=row.judge_call_id,
        )
        for row in rows
    ]
    JudgeScore.objects.bulk_create(scores, ignore_conflicts=True)
    JudgeValidation.objects.filter(pk=validation.pk).update(
        status=JudgeValidation.Status.SCORED, scored_at=timezone.now()
    )
    validation.refresh_from_db()
    return len(scores)


@transaction.atomic
def thresholds_set(*, validation: JudgeValidation, human_alpha_min: float, judge_agreement_min: float) -> None:
    """The researcher's thresholds, applied to every validation of the project (they share the labels)."""
    # The model's bounds: α can be negative, an agreement share cannot.
    if not -1 <= float(human_alpha_min) <= 1:
        raise JudgeValidationRefused("The human α threshold is between -1 and 1.")
    if not 0 <= float(judge_agreement_min) <= 1:
        raise JudgeValidationRefused("The judge agreement threshold is between 0 and 1.")
    JudgeValidation.objects.filter(project=validation.project).update(
        human_alpha_min=float(human_alpha_min), judge_agreement_min=float(judge_agreement_min)
    )


@transaction.atomic
def validation_record(*, validation: JudgeValidation, by=None) -> JudgeValidation:
    """Record the current report's verdicts: from now on the audit shows its judge as validated on this
    rubric version (with these verdicts), until a later recording replaces them."""
    report = validation_report(validation.project, rubric=validation.rubric, validations=[validation], layers=False)
    key = str(validation.pk)
    metrics = {}
    compared = 0
    for row in report["metrics"]:
        section = row["judges"].get(key)
        if section is None:
            continue
        compared = max(compared, section["n_compared"])
        metrics[row["metric"]] = {
            "verdict": section["verdict"]["outcome"],
            "verdict_rule": section["verdict"]["rule"],
            "verdict_by_rule": section["verdict_by_rule"],
            "n": section["verdict"]["n"],
            "conditions": section["verdict"]["conditions"],
            "reasons": section["verdict"]["reasons"],
            "human_alpha_pre": row["human_alpha_pre"]["value"],
            "human_alpha_post": row["human_alpha_post"]["value"],
            "exact_agreement": section["exact_agreement"],
            "within_one": section["within_one"],
            "kappa_linear": section["kappa_linear"]["value"],
            "kappa_ci": [section["kappa_linear"]["ci_low"], section["kappa_linear"]["ci_high"]],
            "kappa_text": section["verdict"]["kappa"],
        }
    if compared == 0:
        raise JudgeValidationRefused("No turn has both a judge score and a human consensus yet: nothing to record.")
    validation.result = {
        "n_turns": compared,
        "verdict_rule": report["verdict_rule"],
        "metrics": metrics,
        "thresholds": {
            "human_alpha_min": validation.human_alpha_min,
            "judge_agreement_min": validation.judge_agreement_min,
        },
        "rubric": validation.rubric.label,
    }
    validation.status = JudgeValidation.Status.RECORDED
    validation.recorded_at = timezone.now()
    validation.recorded_by = by
    validation.save(update_fields=["result", "status", "recorded_at", "recorded_by"])
    return validation


# --- Rubric-refinement workshops ------------------------------------------------------------------


@transaction.atomic
def workshop_record(
    *,
    project: AnnotationProject,
    from_rubric: RubricVersion,
    held_on: date,
    notes: str,
    disagreements: list[dict],
    guideline: str,
    changed_metrics: list[str],
    judge_prompt: str | None = None,
    participants: str = "",
    by=None,
) -> RubricWorkshop:
    """Record a workshop and make the next rubric version: a new judge_rubric template version (the judge's
    prompt, changed or not — the rubric is versioned as one) and the new guideline. When metric definitions
    changed, a re-labelling stage asks the project's annotators for those metrics again, under the new
    guideline; their gate carries over, the new guideline needs their confirmation."""
    unknown = [m for m in changed_metrics if m not in rubric_spec.METRIC_QUESTIONS]
    if unknown:
        raise JudgeValidationRefused(f"Unknown metrics: {', '.join(unknown)}.")
    if not guideline.strip():
        raise JudgeValidationRefused("The new version needs its guideline.")
    item_ids = set(project.items.values_list("id", flat=True))
    for row in disagreements:
        if row.get("item") not in item_ids or row.get("metric") not in rubric_spec.METRIC_QUESTIONS:
            raise JudgeValidationRefused(f"A discussed disagreement names an unknown item or metric: {row!r}.")
    template = judge_template(from_rubric.judge_template_id)
    try:
        new_template = prompt_template_revise(
            template=template,
            text=judge_prompt if judge_prompt and judge_prompt.strip() else template.text,
            description=f"From the rubric workshop of {held_on.isoformat()}.",
            user=by,
        )
    except TemplateTextError as exc:  # a judge prompt without its placeholders is the caller's mistake (400)
        raise JudgeValidationRefused(f"The new judge prompt: {exc}") from exc
    to_rubric = RubricVersion.objects.create(
        judge_template_id=new_template.pk,
        name=new_template.name,
        version=new_template.version,
        guideline=guideline,
        change_note=notes,
        changed_metrics=list(changed_metrics),
        previous=from_rubric,
        created_by=by,
    )
    workshop = RubricWorkshop.objects.create(
        project=project,
        from_rubric=from_rubric,
        to_rubric=to_rubric,
        held_on=held_on,
        participants=participants,
        notes=notes,
        disagreements=list(disagreements),
        created_by=by,
    )
    if changed_metrics:
        workshop.relabel_stage = _relabel_stage(project, to_rubric, changed_metrics, by)
        workshop.save(update_fields=["relabel_stage"])
    return workshop


def _relabel_stage(project, rubric: RubricVersion, metrics: list[str], by) -> Stage:
    base = validation_stage(project)
    if base is None:
        raise JudgeValidationRefused("This project has no labelling stage.")
    questions = list(LabelQuestion.objects.filter(project=project, key__in=metrics))
    stage = stage_create(
        project=project,
        name=f"Re-label under {rubric.label}: {', '.join(metrics)}",
        task="The rubric changed for these questions; rate the same turns again under the new guideline.",
        pool=base.pool,
        questions=questions,
        overlap=base.overlap,
        resolution_policy=base.resolution_policy,
        pilot_size=base.pilot_size,
        qualification_size=base.qualification_size,
        qualification_min_correct=base.qualification_min_correct,
    )
    guideline_publish(stage=stage, text=rubric.guideline, change_note=f"The guideline of {rubric.label}.", by=by)
    _open_main_items(stage, list(sampled_items(project)))
    for enrollment in base.enrollments.filter(status=Enrollment.Status.PASSED).select_related("user"):
        enrollment_gate_record(
            enrollment=enrollment_create(
                stage=stage, user=enrollment.user, subject=enrollment.subject, subject_copied=True
            ),
            rule=enrollment.gate_rule or "carried",
            detail={"carried_over_from_stage": base.pk, "enrollment": enrollment.pk},
            pilot_score=enrollment.pilot_score,
            qualification_score=enrollment.qualification_score,
        )
    return stage
