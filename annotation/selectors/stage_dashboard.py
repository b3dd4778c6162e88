"""Reads for a stage's live dashboard: progress, annotators' pace, running agreement and rates.

While the stage runs: items complete / in progress / waiting, labels per annotator with their median seconds per item,
the running Fleiss κ and Krippendorff α on the pre-discussion labels so far (computed by `annotation.agreement`, through
the report's own `agreement_cell`, each with a 95 % bootstrap interval over items of ``DASHBOARD_RESAMPLES``
resamples — fewer than the report's 1,000, as the page refreshes every few seconds — and its units; α with the
probabilities it is under 0.667 and 0.800), Gwet's AC1 (and, for an ordinal question, AC2 with linear weights, both
with their intervals) with the class shares and the report's κ-paradox warning, the
disagreement and adjudication rates, revised labels and reservations held.

A handful of queries per request whatever the stage's size, read again on every refresh."""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict

from django.utils import timezone

from annotation.agreement import UNSURE
from annotation.gwet import DEFAULT_PREVALENCE_MARGIN
from annotation.models import Adjudication, Assignment, Label, LabelRevision, MainItem, Phase, Stage
from annotation.selectors.adjudication import QUEUE_STATUSES
from annotation.selectors.agreement_report import agreement_cell, annotator_pseudonyms

DASHBOARD_RESAMPLES = 200
ESCALATED = (MainItem.Status.SENIOR_REVIEW, MainItem.Status.REVIEWER_QUEUE)


def stage_pre_labels(stage: Stage) -> tuple[dict[int, dict[int, dict[int, str]]], dict[int, dict[int, float]]]:
    """The stage's submitted main labels before discussion, in their current (final, after any revision)
    version, read in one query: (question id → item id → annotator id → value, Unsure as `UNSURE`;
    annotator id → assignment id → the item's active seconds)."""
    by_question: dict[int, dict[int, dict[int, str]]] = defaultdict(lambda: defaultdict(dict))
    seconds: dict[int, dict[int, float]] = defaultdict(dict)
    rows = Label.objects.filter(
        assignment__stage=stage,
        phase=Phase.MAIN,
        round=Label.Round.PRE,
        assignment__submitted_at__isnull=False,
    ).values_list(
        "question_id", "assignment__item_id", "assignment__annotator_id", "assignment_id", "value", "unsure", "seconds"
    )
    for question_id, item_id, annotator_id, assignment_id, value, unsure, label_seconds in rows:
        by_question[question_id][item_id][annotator_id] = UNSURE if unsure else value
        # One time per labelled item, shared by its questions (as the report reads it).
        seconds[annotator_id][assignment_id] = max(seconds[annotator_id].get(assignment_id, 0.0), label_seconds)
    return by_question, seconds


def stage_dashboard(stage: Stage) -> dict:
    """Everything the dashboard shows, JSON-ready (floats at full precision)."""
    now = timezone.now()
    statuses = Counter()
    in_progress = 0
    complete_items: set[int] = set()
    waiting_for_reviewer: set[int] = set()
    for item_id, status, taken in MainItem.objects.filter(stage=stage).values_list("item_id", "status", "slots_taken"):
        statuses[status] += 1
        if status == MainItem.Status.LABELLING:
            in_progress += bool(taken)
        else:
            complete_items.add(item_id)
        if status in ESCALATED:
            waiting_for_reviewer.add(item_id)
    total = sum(statuses.values())
    complete = total - statuses.get(MainItem.Status.LABELLING, 0)

    main = Assignment.objects.filter(stage=stage, phase=Phase.MAIN)
    reservations = main.filter(submitted_at__isnull=True, reserved_until__gt=now).count()
    labels, seconds = stage_pre_labels(stage)
    pseudonyms = annotator_pseudonyms(stage.project)
    annotators = sorted(
        (
            {
                "annotator": pseudonyms.get(annotator_id, f"user-{annotator_id}"),
                "labels": len(per_item),
                "median_seconds": statistics.median(per_item.values()) if per_item else None,
            }
            for annotator_id, per_item in seconds.items()
        ),
        key=lambda row: row["annotator"],
    )

    agreement = []
    for question in stage.questions.all():
        by_item = labels.get(question.pk, {})
        cell = agreement_cell(question, by_item, sorted(by_item), n_boot=DASHBOARD_RESAMPLES)
        agreement.append(
            {
                "question": question.key,
                "fleiss_kappa": cell["fleiss_kappa"],
                "krippendorff_alpha": cell["krippendorff_alpha"],
                "gwet_ac1": cell["gwet_ac1"],
                "gwet_ac2_linear": cell.get("gwet_ac2_linear"),  # ordinal questions only
                "items": cell["items"],
                "class_shares": cell["class_shares"],
                "class_shares_text": cell["class_shares_text"],
                "prevalence_warning": cell["prevalence_warning"],
            }
        )

    disagreed = {
        item_id
        for by_item in labels.values()
        for item_id, answers in by_item.items()
        if item_id in complete_items and len(set(answers.values())) > 1
    }
    escalated = waiting_for_reviewer | set(
        Adjudication.objects.filter(stage=stage, method=Adjudication.Method.SENIOR).values_list("item_id", flat=True)
    )
    revised = LabelRevision.objects.filter(label__assignment__stage=stage).values("label_id").distinct().count()
    return {
        "stage": stage.pk,
        "project": stage.project_id,
        "items": {
            "total": total,
            "complete": complete,
            "in_progress": in_progress,
            "waiting": total - complete - in_progress,
        },
        "statuses": {status: statuses.get(status, 0) for status in MainItem.Status.values},
        "labels": sum(len(per_item) for per_item in seconds.values()),
        "revised_labels": revised,
        "reservations_held": reservations,
        "annotators": annotators,
        "agreement": agreement,
        "prevalence_margin": DEFAULT_PREVALENCE_MARGIN,
        "disagreement_rate": len(disagreed) / complete if complete else None,
        "adjudication_rate": len(escalated) / complete if complete else None,
        "in_queue": sum(statuses.get(status, 0) for status in QUEUE_STATUSES),
        "running": complete < total or reservations > 0,
        "generated_at": now,
    }
