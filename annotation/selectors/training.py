"""Reads for training: progress, each annotator's pilot, pilot feedback and the gate's gold comparisons.

The progress is an enrolment's, fed to the pure step machine; an annotator's pilot is their own draw from the stage's
pilot pool (`workflow.pilot_draw`) when the pool is larger than the pilot size; the pilot feedback comes only after
submission, only for the items the annotator submitted, and only as the stage's feedback rule allows
(`workflow.pilot_feedback`). They also say what identifies training items (for gold isolation)."""

from __future__ import annotations

from django.db.models import Count, Q

from annotation.models import (
    Assignment,
    Enrollment,
    ExampleView,
    GoldLabel,
    Guideline,
    GuidelineConfirmation,
    Item,
    Label,
    Phase,
    Stage,
    Thread,
    TrainingItem,
    WorkedExample,
)
from annotation.selectors.labelling_settings import labelling_settings
from annotation.workflow.gate import GateParams, GoldComparison, gate_rules, gold_score, pilot_passes
from annotation.workflow.gold_isolation import TrainingSecrets, secrets_from
from annotation.workflow.pilot import PoolItem
from annotation.workflow.pilot_draw import recruit_pilot
from annotation.workflow.pilot_feedback import PASSED, VisibleScores, feedback_refusal, visible_scores
from annotation.workflow.training import TrainingProgress


def guideline_current(stage: Stage) -> Guideline | None:
    return stage.guidelines.order_by("-version").first()


def enrollments_of_user(user):
    return (
        Enrollment.objects.filter(user=user)
        .select_related("stage", "stage__project")
        .order_by("stage__project__name", "stage__order")
    )


def enrollment_of(user, stage_pk: int) -> Enrollment | None:
    """``user``'s enrolment in the stage, with the stage and its project (None when not enrolled)."""
    return Enrollment.objects.filter(stage_id=stage_pk, user=user).select_related("stage__project").first()


def passed_enrollments(user):
    """``user``'s enrolments that passed the gate (the stages they may label), by project and stage order."""
    return (
        Enrollment.objects.filter(user=user, status=Enrollment.Status.PASSED)
        .select_related("stage__project")
        .order_by("stage__project__name", "stage__order")
    )


def training_item_of(stage: Stage, phase: str, item_id: int | None) -> TrainingItem | None:
    """The stage's training item of ``phase`` for the project item ``item_id`` (None when it is not one)."""
    return TrainingItem.objects.filter(stage=stage, phase=phase, item_id=item_id).first()


def stage_training_items(stage: Stage):
    """The stage's pilot and qualification items."""
    return TrainingItem.objects.filter(stage=stage)


def open_norming_threads(limit: int = 200):
    """Open norming threads across projects, the newest first (at most ``limit``)."""
    return (
        Thread.objects.filter(kind=Thread.Kind.NORMING, is_open=True)
        .select_related("stage__project", "item")
        .order_by("-created_at")[:limit]
    )


def training_progress(enrollment: Enrollment) -> TrainingProgress:
    stage = enrollment.stage
    guideline = guideline_current(stage)
    confirmed = (
        guideline is not None
        and GuidelineConfirmation.objects.filter(enrollment=enrollment, guideline=guideline).exists()
    )
    pilot_ids = pilot_item_ids(enrollment)
    qualification_total = TrainingItem.objects.filter(stage=stage, phase=TrainingItem.Phase.QUALIFICATION).count()
    done_counts = Assignment.objects.filter(
        stage=stage, annotator=enrollment.user, submitted_at__isnull=False
    ).aggregate(
        pilot=Count("id", filter=Q(phase=Phase.PILOT, item_id__in=pilot_ids)),
        qualification=Count("id", filter=Q(phase=Phase.QUALIFICATION)),
    )
    settings = labelling_settings(stage)
    pilot_done = bool(pilot_ids) and done_counts["pilot"] >= len(pilot_ids)
    return TrainingProgress(
        current_guideline_version=guideline.version if guideline else None,
        confirmed_current_guideline=confirmed,
        examples_total=WorkedExample.objects.filter(stage=stage).count(),
        examples_seen=ExampleView.objects.filter(enrollment=enrollment).count(),
        pilot_total=len(pilot_ids),
        pilot_labelled=done_counts["pilot"],
        norming_done=enrollment.norming_acknowledged_at is not None,
        qualification_total=qualification_total,
        qualification_labelled=done_counts["qualification"],
        gate_passed=enrollment.gate_passed,
        replaced=enrollment.status == Enrollment.Status.REPLACED,
        pilot_closed=settings.pilot_closed,
        feedback_refusal=pilot_feedback_refusal(enrollment, pilot_done=pilot_done),
    )


def own_gate_fields(enrollment: Enrollment, progress: TrainingProgress | None = None) -> dict:
    """The enrolment's stored gate fields as the annotator themself may read them (`scores_visible`): pass or
    fail always; their pilot score and coverage once its gold is open to them; the qualification's score and
    counts only after passing; the gate's detail (scores, reasons) never. Every door that shows an annotator
    their own enrolment (the training state, the enrolment API) reads it through here."""
    visible = scores_visible(enrollment, progress or training_progress(enrollment))
    return {
        "pilot_score": enrollment.pilot_score if visible.pilot else None,
        "pilot_coverage": enrollment.pilot_coverage if visible.pilot else None,
        "qualification_score": enrollment.qualification_score if visible.qualification else None,
        "qualification_correct": enrollment.qualification_correct if visible.qualification else None,
        "qualification_total": enrollment.qualification_total if visible.qualification else None,
        "qualification_coverage": enrollment.qualification_coverage if visible.qualification else None,
        "gate_passed": enrollment.gate_passed,
        "gate_detail": {"passed": enrollment.gate_passed} if enrollment.gate_passed is not None else {},
    }


def pilot_item_ids(enrollment: Enrollment) -> list[int]:
    """The annotator's pilot, in set order: the stage's whole pilot set when it is no larger than the
    stage's pilot size, else their own seeded draw of pilot-size items from it (`workflow.pilot_draw`)."""
    stage = enrollment.stage
    uses = list(
        TrainingItem.objects.filter(stage=stage, phase=TrainingItem.Phase.PILOT)
        .order_by("position", "id")
        .values_list("item_id", "item__category", "item__subject")
    )
    project = stage.project
    drawn = set(
        recruit_pilot(
            [PoolItem(id=i, category=c, subject=s) for i, c, s in uses],
            stage.pilot_size,
            stage_id=stage.pk,
            annotator_id=enrollment.user_id,
            categories=project.categories or None,
            subjects=project.subjects or None,
        )
    )
    return [item_id for item_id, _, _ in uses if item_id in drawn]


def pilot_feedback_refusal(enrollment: Enrollment, *, pilot_done: bool = True) -> str | None:
    """Why this annotator may not see their pilot's gold (`workflow.pilot_feedback`), or None. Only asked
    once their pilot is in; before that the step machine refuses anyway."""
    if not pilot_done:
        return None
    settings = labelling_settings(enrollment.stage)
    passed = None
    if settings.pilot_feedback == PASSED:
        params = gate_params(enrollment.stage)
        try:
            comparisons = gold_comparisons(enrollment, Phase.PILOT)
        except ValueError:  # a question added after their pilot has gold but no answer: not scored, not passed
            comparisons = []
        passed = bool(comparisons) and pilot_passes(gold_score(comparisons, params.unsure_rule), params)
    return feedback_refusal(settings.pilot_feedback, pilot_passed=passed, pilot_closed=settings.pilot_closed)


def scores_visible(enrollment: Enrollment, progress: TrainingProgress) -> VisibleScores:
    """Which of their own scores the annotator may see (none of them after failing, unless the pilot's gold
    is open to them)."""
    return visible_scores(
        feedback_shown=progress.pilot_done and progress.feedback_refusal is None, gate_passed=enrollment.gate_passed
    )


def gate_params(stage: Stage) -> GateParams:
    """The stage's gate as the pure gate takes it (the pilot's coverage floor applies under "exclude")."""
    return GateParams(
        pilot_threshold=stage.pilot_threshold,
        qualification_threshold=stage.qualification_threshold,
        unsure_rule=stage.unsure_rule,
        min_coverage=stage.unsure_min_coverage,
    )


def stage_gate_rules(stage: Stage) -> dict[str, str]:
    """The stage's gate in words (`workflow.gate.gate_rules`): what the stage page, the annotator's training
    page, the pilot feedback, the training API and the report state."""
    return gate_rules(gate_params(stage), pilot_size=stage.pilot_size, qualification_size=stage.qualification_size)


def worked_examples(stage: Stage) -> list[WorkedExample]:
    return list(WorkedExample.objects.filter(stage=stage).select_related("item", "question"))


def examples_seen_ids(enrollment: Enrollment) -> set[int]:
    return set(ExampleView.objects.filter(enrollment=enrollment).values_list("example_id", flat=True))


def training_item_next(enrollment: Enrollment, phase: str) -> Item | None:
    """The first pilot or qualification item this annotator has not submitted yet (in set order)."""
    done = Assignment.objects.filter(
        stage=enrollment.stage, annotator=enrollment.user, phase=phase, submitted_at__isnull=False
    ).values("item_id")
    uses = TrainingItem.objects.filter(stage=enrollment.stage, phase=phase)
    if phase == Phase.PILOT:
        uses = uses.filter(item_id__in=pilot_item_ids(enrollment))
    use = uses.exclude(item_id__in=done).select_related("item").order_by("position", "id").first()
    return use.item if use else None


def training_counts(enrollment: Enrollment, phase: str) -> tuple[int, int]:
    """(labelled, total) for the annotator's pilot or the qualification test."""
    done = Assignment.objects.filter(
        stage=enrollment.stage, annotator=enrollment.user, phase=phase, submitted_at__isnull=False
    )
    if phase == Phase.PILOT:
        item_ids = training_item_ids_of(enrollment, phase)
        return done.filter(item_id__in=item_ids).count(), len(item_ids)
    return done.count(), TrainingItem.objects.filter(stage=enrollment.stage, phase=phase).count()


def training_item_ids_of(enrollment: Enrollment, phase: str) -> list[int]:
    """The annotator's items of ``phase``: their pilot (`pilot_item_ids`) or the stage's qualification test."""
    if phase == Phase.PILOT:
        return pilot_item_ids(enrollment)
    return list(
        TrainingItem.objects.filter(stage=enrollment.stage, phase=phase)
        .order_by("position", "id")
        .values_list("item_id", flat=True)
    )


def gold_comparisons(enrollment: Enrollment, phase: str) -> list[GoldComparison]:
    """One comparison per (the annotator's training item of ``phase``, stage question): their answer and gold."""
    stage = enrollment.stage
    item_ids = training_item_ids_of(enrollment, phase)
    question_ids = list(stage.questions.values_list("id", flat=True))
    gold = {
        (g.item_id, g.question_id): g.value
        for g in GoldLabel.objects.filter(item_id__in=item_ids, question_id__in=question_ids)
    }
    answers = {
        (lab.assignment.item_id, lab.question_id): lab
        for lab in Label.objects.filter(
            assignment__stage=stage,
            assignment__annotator=enrollment.user,
            assignment__phase=phase,
            round=Label.Round.PRE,
        ).select_related("assignment")
    }
    comparisons = []
    for key, gold_value in sorted(gold.items()):
        label = answers.get(key)
        if label is None:
            raise ValueError(f"item {key[0]} has no answer to question {key[1]} yet")
        comparisons.append(GoldComparison(value=label.value or None, gold=gold_value, unsure=label.unsure))
    return comparisons


def pilot_feedback(enrollment: Enrollment) -> list[dict]:
    """Per pilot item the annotator submitted: their answers beside gold and its rationale. Call only after
    submission (the caller checks Action.VIEW_PILOT_FEEDBACK); it never includes anyone else's labels."""
    stage = enrollment.stage
    questions = list(stage.questions.all())
    mine_ids = pilot_item_ids(enrollment)
    items = sorted(Item.objects.filter(pk__in=mine_ids), key=lambda item: mine_ids.index(item.pk))
    gold = {(g.item_id, g.question_id): g for g in GoldLabel.objects.filter(item__in=items, question__in=questions)}
    mine = {
        (lab.assignment.item_id, lab.question_id): lab
        for lab in Label.objects.filter(
            assignment__stage=stage,
            assignment__annotator=enrollment.user,
            assignment__phase=Phase.PILOT,
            assignment__submitted_at__isnull=False,
            round=Label.Round.PRE,
        ).select_related("assignment")
    }
    # Gold is feedback on the annotator's own submitted labels: a pilot item they have not submitted
    # (one added to the pilot later) shows nothing.
    submitted = {item_id for item_id, _ in mine}
    items = [item for item in items if item.id in submitted]
    threads = dict(
        Thread.objects.filter(stage=stage, kind=Thread.Kind.NORMING, item__in=items).values_list("item_id", "id")
    )
    rows = []
    for item in items:
        answers = []
        for question in questions:
            label = mine.get((item.id, question.id))
            gold_label = gold.get((item.id, question.id))
            value = None if label is None or label.unsure else label.value
            answers.append(
                {
                    "question": question.key,
                    "prompt": question.prompt,
                    "your_value": value,
                    "your_label": "Unsure" if label and label.unsure else question.choice_label(value or ""),
                    "unsure": bool(label and label.unsure),
                    "gold_value": gold_label.value if gold_label else None,
                    "gold_label": question.choice_label(gold_label.value) if gold_label else None,
                    "rationale": gold_label.rationale if gold_label else "",
                    "agrees": bool(label and not label.unsure and gold_label and label.value == gold_label.value),
                }
            )
        rows.append({"item": item, "answers": answers, "thread_id": threads.get(item.id)})
    return rows


def norming_threads(stage: Stage, enrollment: Enrollment | None = None):
    """The stage's norming threads; for an annotator (``enrollment``) only those on items of their own pilot."""
    threads = Thread.objects.filter(stage=stage, kind=Thread.Kind.NORMING)
    if enrollment is not None:
        threads = threads.filter(item_id__in=pilot_item_ids(enrollment))
    return threads.select_related("item").annotate(comment_count=Count("comments")).order_by("item_id")


def _item_texts(payload: dict) -> list[str]:
    texts = [str(payload.get("text") or "")]
    texts += [str(turn.get("text") or "") for turn in payload.get("turns") or [] if isinstance(turn, dict)]
    return texts


def training_secrets(project) -> TrainingSecrets:
    """Ids, texts and gold rationales of every pilot and qualification item of the project's stages."""
    items = Item.objects.filter(training_uses__stage__project=project).distinct()
    rationales = GoldLabel.objects.filter(item__in=items).exclude(rationale="").values_list("rationale", flat=True)
    rows = [(item.external_id, text, "") for item in items for text in _item_texts(item.payload or {})]
    rows += [("", "", rationale) for rationale in rationales]
    return secrets_from(rows)
