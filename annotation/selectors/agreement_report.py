"""Reads for the agreement and cost figures of a project's report.

They give every figure SafeTutors' Appendix D gives (Fleiss' κ per stage, subject and single- vs multi-turn;
adjudication rates; label distribution after adjudication; label volume), plus Krippendorff's α, pre- and
post-discussion agreement, each annotator's agreement with the final labels, and the hours and spend the paper never
reported.

The statistics come from `annotation.agreement` (pure); this module only arranges stored labels into the
matrices those functions take. Conventions, stated in the report as well:

- agreement uses main-phase labels; "post-discussion" replaces an annotator's first answer by their
  post-discussion answer where they gave one;
- an "Unsure" answer is left out of κ and α (a missing rating), and counts as a miss against the final
  label in per-annotator agreement (the strict rule);
- κ and α over all items and per subject and modality (before and after discussion) carry a 95 % percentile
  bootstrap interval over items
  (`annotation.agreement_intervals`, B = 1,000, seeded from the labels) and their units: items rated, items
  with two or more ratings (the n both count), and the pairable values; α also the probability it is under
  0.667 and 0.800. Gwet's AC1 (`annotation.gwet`, on the same ratings as Fleiss' κ, the question's choices as
  its categories) stands beside them, robust to one dominant class, and for an ordinal question AC2 with linear
  weights over the scale's order (``gwet_ac2_linear``, on the ratings ordinal α uses, as the judge-validation report's
  AC2), each with its interval (`annotation.agreement_intervals.ac1_interval`); a nominal question has no AC2. Where
  unweighted κ and AC1 differ by more than 0.20 the cell carries the κ-paradox warning with the class shares
  (`annotation.gwet.prevalence_warning`);
- time per item is the active time recorded with the item's labels; hours include pilot and
  qualification time, which annotators are paid for too.
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass
from decimal import Decimal

from django.db.models import Count

from annotation.agreement import UNSURE, fleiss_kappa, gold_agreement, krippendorff_alpha
from annotation.agreement_intervals import ac1_interval, alpha_interval, fleiss_interval
from annotation.agreement_units import p_below_text, rating_units, units_text
from annotation.gwet import DEFAULT_PREVALENCE_MARGIN, class_shares, gwet_ac, prevalence_warning, shares_text
from annotation.models import (
    Adjudication,
    AnnotationProject,
    Enrollment,
    Item,
    Label,
    LabelQuestion,
    LabelRevision,
    MainItem,
    Phase,
    Stage,
    Thread,
)
from annotation.selectors.conflicts import removed_item_ids


@dataclass(frozen=True)
class LabelRow:
    assignment_id: int
    stage_id: int
    item_id: int
    annotator_id: int
    phase: str
    question_id: int
    round: str
    value: str  # UNSURE for an Unsure answer
    seconds: float


def project_labels(project: AnnotationProject) -> list[LabelRow]:
    """Every submitted label of the project, as plain rows (one query)."""
    rows = Label.objects.filter(assignment__stage__project=project, assignment__submitted_at__isnull=False).values_list(
        "assignment_id",
        "assignment__stage_id",
        "assignment__item_id",
        "assignment__annotator_id",
        "phase",
        "question_id",
        "round",
        "value",
        "unsure",
        "seconds",
    )
    return [
        LabelRow(a, s, i, who, phase, q, rnd, UNSURE if unsure else value, seconds)
        for a, s, i, who, phase, q, rnd, value, unsure, seconds in rows
    ]


def annotator_pseudonyms(project: AnnotationProject) -> dict[int, str]:
    """A stable pseudonym per annotator of the project: A01, A02, … in the order they first enrolled."""
    names: dict[int, str] = {}
    for user_id in Enrollment.objects.filter(stage__project=project).order_by("id").values_list("user_id", flat=True):
        names.setdefault(user_id, f"A{len(names) + 1:02d}")
    return names


def rate_text(count: int, total: int, what: str) -> str:
    """The paper's form: "152/3,600 = 4.2% no majority"."""
    if not total:
        return f"0/0 {what} (nothing settled yet)"
    return f"{count:,}/{total:,} = {100 * count / total:.1f}% {what}"


def _result(result, matrix: list[list[str | None]]) -> dict:
    """A coefficient with its three counts (`annotation.agreement_units`) over the ratings it used."""
    units = rating_units(sum(v is not None for v in row) for row in matrix)
    return {
        "value": result.value,
        "n_units": result.n_units,
        "undefined_reason": result.undefined_reason,
        "units": units,
        "units_text": units_text(units),
    }


def _matrix(by_item: dict[int, dict[int, str]], items: list[int]) -> list[list[str | None]]:
    """Units × rater slots; an Unsure answer is a missing rating (see the module docstring)."""
    width = max((len(by_item[i]) for i in items), default=0)
    rows = []
    for item_id in items:
        values = [None if v == UNSURE else v for _, v in sorted(by_item[item_id].items())]
        rows.append(values + [None] * (width - len(values)))
    return rows


REPORT_RESAMPLES = 1000


def _with_interval(result: dict, interval: dict) -> dict:
    """A point result with its bootstrap interval (and α's probabilities of falling under its minimums)."""
    found = {
        **result,
        "low": interval["low"],
        "high": interval["high"],
        "confidence": interval["confidence"],
        "n_boot": interval["n_boot"],
    }
    if "p_below" in interval:
        found["p_below"] = {f"{m:.3f}": p for m, p in interval["p_below"].items()}
        found["p_below_text"] = p_below_text(interval["p_below"])
    return found


def _prevalence(kappa: dict, ac1: dict, shares: dict) -> dict:
    """The class shares of the ratings κ and AC1 use, and the κ-paradox warning when they differ by more than the
    margin (`annotation.gwet.prevalence_warning`, the rule the judge-validation report applies too)."""
    return {
        "class_shares": shares,
        "class_shares_text": shares_text(shares),
        "prevalence_margin": DEFAULT_PREVALENCE_MARGIN,
        "prevalence_warning": prevalence_warning(kappa["value"], ac1["value"], shares, DEFAULT_PREVALENCE_MARGIN),
    }


def agreement_cell(
    question: LabelQuestion, by_item: dict[int, dict[int, str]], items: list[int], *, n_boot: int = 0
) -> dict:
    """Fleiss' κ and Krippendorff's α (at the question's level) over ``items``; with ``n_boot`` resamples, each
    with its bootstrap interval over items and its units."""
    matrix = _matrix(by_item, items)
    if not matrix or not matrix[0]:
        units = rating_units(())
        empty = {
            "value": None,
            "n_units": 0,
            "undefined_reason": "no labels",
            "units": units,
            "units_text": units_text(units),
        }
        return {
            "fleiss_kappa": empty,
            "krippendorff_alpha": empty,
            "gwet_ac1": empty,
            **({"gwet_ac2_linear": empty} if question.level == LabelQuestion.Level.ORDINAL else {}),
            "items": len(items),
            **_prevalence(empty, empty, {}),
        }
    level = "ordinal" if question.level == LabelQuestion.Level.ORDINAL else "nominal"
    domain = [str(choice["value"]) for choice in question.choices] if level == "ordinal" else None
    if domain is not None:
        # Values outside the ordered scale (e.g. "not applicable") cannot sit on it: left out of ordinal α.
        alpha_matrix = [[v if v in domain else None for v in row] for row in matrix]
    else:
        alpha_matrix = matrix
    transposed = [list(column) for column in zip(*alpha_matrix, strict=True)]
    kappa = _result(fleiss_kappa(matrix), matrix)
    alpha = _result(krippendorff_alpha(transposed, level, value_domain=domain), alpha_matrix)
    # AC1 on the same ratings as Fleiss' κ; the scale's unused categories count (irrCAC's categ.labels).
    seen = {v for row in matrix for v in row if v is not None}
    categories = [str(c["value"]) for c in question.choices]
    categories += sorted(seen - set(categories))
    ac1 = _result(gwet_ac(matrix, categories), matrix)
    # AC2 with the scale's linear weights (as the judge-validation report's) on the ratings ordinal α uses.
    ac2 = _result(gwet_ac(alpha_matrix, domain, "linear"), alpha_matrix) if domain is not None else None
    if n_boot:
        kappa = _with_interval(kappa, fleiss_interval(matrix, n_boot=n_boot))
        alpha = _with_interval(alpha, alpha_interval(transposed, level, value_domain=domain, n_boot=n_boot))
        ac1 = _with_interval(ac1, ac1_interval(matrix, categories, n_boot=n_boot))
        if ac2 is not None:
            ac2 = _with_interval(ac2, ac1_interval(alpha_matrix, domain, weights="linear", n_boot=n_boot))
    shares = class_shares((v for row in matrix for v in row if v is not None), categories)
    return {
        "fleiss_kappa": kappa,
        "krippendorff_alpha": alpha,
        "gwet_ac1": ac1,
        **({"gwet_ac2_linear": ac2} if ac2 is not None else {}),
        "level": level,
        "items": len(items),
        **_prevalence(kappa, ac1, shares),
    }


def stage_agreement(stage: Stage, labels: list[LabelRow], items: dict[int, Item]) -> list[dict]:
    """Per question of the stage: κ and α overall, per subject and per modality, pre and post discussion."""
    main = [row for row in labels if row.stage_id == stage.id and row.phase == Phase.MAIN]
    rows = []
    for question in stage.questions.all():
        pre: dict[int, dict[int, str]] = defaultdict(dict)
        post: dict[int, dict[int, str]] = defaultdict(dict)
        for row in main:
            if row.question_id != question.id:
                continue
            if row.round == Label.Round.PRE:
                pre[row.item_id][row.annotator_id] = row.value
            else:
                post[row.item_id][row.annotator_id] = row.value
        revised = {item_id: {**answers, **post.get(item_id, {})} for item_id, answers in pre.items()}
        item_ids = sorted(pre)
        # (kind, title, the items' subject or modality that selects the group, its items)
        groups: list[tuple[str, str, str, list[int]]] = [("all", "All items", "", item_ids)]
        for subject in sorted({items[i].subject for i in item_ids}):
            chosen = [i for i in item_ids if items[i].subject == subject]
            groups.append(("subject", subject or "(none)", subject, chosen))
        for modality, title in Item.Modality.choices:
            chosen = [i for i in item_ids if items[i].modality == modality]
            if chosen:
                groups.append(("modality", title, modality, chosen))
        rows.append(
            {
                "question": question.key,
                "prompt": question.prompt,
                "has_post_discussion": bool(post),
                "groups": [
                    {
                        "kind": kind,
                        "group": name,
                        "value": value,
                        "pre": agreement_cell(question, pre, chosen, n_boot=REPORT_RESAMPLES),
                        "post": agreement_cell(question, revised, chosen, n_boot=REPORT_RESAMPLES if post else 0),
                    }
                    for kind, name, value, chosen in groups
                ],
            }
        )
    return rows


def annotator_agreement(
    stage: Stage, labels: list[LabelRow], finals: dict[tuple[int, int], str], pseudonyms: dict[int, str]
) -> list[dict]:
    """Each annotator's first answers against the final labels (Unsure is a miss: strict rule)."""
    theirs: dict[int, list[tuple[str, str]]] = defaultdict(list)
    for row in labels:
        if row.stage_id == stage.id and row.phase == Phase.MAIN and row.round == Label.Round.PRE:
            final = finals.get((row.item_id, row.question_id))
            if final is not None:
                theirs[row.annotator_id].append((row.value, final))
    result = []
    for annotator_id, pairs in sorted(theirs.items(), key=lambda kv: pseudonyms.get(kv[0], "")):
        agreement = gold_agreement([v for v, _ in pairs], [f for _, f in pairs], unsure="strict")
        result.append(
            {
                "annotator": pseudonyms.get(annotator_id, f"user-{annotator_id}"),
                "compared": agreement.n_units,
                "agreement": agreement.value,
            }
        )
    return result


def stage_adjudication(stage: Stage, decisions: list[Adjudication]) -> dict:
    """How items were settled: counts by method, and the headline rate of the stage's policy."""
    statuses = Counter(MainItem.objects.filter(stage=stage).values_list("status", flat=True))
    complete = sum(count for status, count in statuses.items() if status != MainItem.Status.LABELLING)
    by_method = Counter(d.method for d in decisions)
    senior_items = {d.item_id for d in decisions if d.method == Adjudication.Method.SENIOR}
    if stage.resolution_policy == Stage.Resolution.MAJORITY_REVIEWER:
        escalated = len(senior_items) + statuses.get(MainItem.Status.REVIEWER_QUEUE, 0)
        headline = rate_text(escalated, complete, "no majority")
        discussed = None
    else:
        discussed = Thread.objects.filter(stage=stage, kind=Thread.Kind.ADJUDICATION).count()
        escalated = len(senior_items) + statuses.get(MainItem.Status.SENIOR_REVIEW, 0)
        headline = (
            rate_text(discussed, complete, "needed discussion")
            + "; "
            + rate_text(escalated, complete, "went to the senior reviewer")
        )
    return {
        "policy": stage.get_resolution_policy_display(),
        "items": sum(statuses.values()),
        "items_complete": complete,
        "items_resolved": statuses.get(MainItem.Status.RESOLVED, 0),
        "waiting": {
            status: statuses.get(status, 0)
            for status in (
                MainItem.Status.DISCUSSION,
                MainItem.Status.SENIOR_REVIEW,
                MainItem.Status.REVIEWER_QUEUE,
            )
        },
        "decisions": len(decisions),
        "by_method": {method: by_method.get(method, 0) for method in Adjudication.Method.values},
        "discussed_items": discussed,
        "escalated_items": escalated,
        "headline": headline,
    }


def stage_distribution(stage: Stage, decisions: list[Adjudication], removed: set[int]) -> list[dict]:
    """Final values per question after adjudication (items removed for a cross-stage conflict left out)."""
    rows = []
    for question in stage.questions.all():
        kept = [d.final_value for d in decisions if d.question_id == question.id and d.item_id not in removed]
        counts = Counter(kept)
        total = len(kept)
        rows.append(
            {
                "question": question.key,
                "total": total,
                "removed": sum(1 for d in decisions if d.question_id == question.id and d.item_id in removed),
                "values": [
                    {
                        "value": value,
                        "label": question.choice_label(value),
                        "count": counts.get(value, 0),
                        "share": counts.get(value, 0) / total if total else None,
                    }
                    for value in question.values
                ],
            }
        )
    return rows


def revised_label_counts(project: AnnotationProject) -> dict[int, tuple[int, int]]:
    """Stage id → (labels revised by their annotator, earlier versions kept), one query."""
    rows = (
        LabelRevision.objects.filter(label__assignment__stage__project=project)
        .values("label__assignment__stage_id")
        .annotate(labels=Count("label_id", distinct=True), versions=Count("id"))
        .values_list("label__assignment__stage_id", "labels", "versions")
    )
    return {stage_id: (labels, versions) for stage_id, labels, versions in rows}


def stage_volume(stage: Stage, labels: list[LabelRow], revised: tuple[int, int] = (0, 0)) -> dict:
    mine = [row for row in labels if row.stage_id == stage.id]
    by_phase = Counter(row.phase for row in mine)
    return {
        "labels": len(mine),
        "by_phase": {phase: by_phase.get(phase, 0) for phase in Phase.values},
        "post_discussion": sum(1 for row in mine if row.round == Label.Round.POST),
        "revised_labels": revised[0],
        "revisions": revised[1],
        "items_labelled": len({row.assignment_id for row in mine if row.phase == Phase.MAIN}),
        "annotators": len({row.annotator_id for row in mine}),
    }


def stage_time_and_cost(stage: Stage, labels: list[LabelRow], items: dict[int, Item], final_labels: int) -> dict:
    """Hours from recorded active time (one value per labelled item, shared by its questions), spend from
    the stage's pay rate, and the cost per final label."""
    per_assignment: dict[int, tuple[str, int, float]] = {}
    for row in labels:
        if row.stage_id == stage.id and row.round == Label.Round.PRE:
            known = per_assignment.get(row.assignment_id)
            seconds = max(row.seconds, known[2]) if known else row.seconds
            per_assignment[row.assignment_id] = (row.phase, row.item_id, seconds)
    seconds_by_phase = Counter()
    minutes_by_modality: dict[str, list[float]] = defaultdict(list)
    for phase, item_id, seconds in per_assignment.values():
        seconds_by_phase[phase] += seconds
        if phase == Phase.MAIN:
            minutes_by_modality[items[item_id].modality].append(seconds / 60)
    total_hours = sum(seconds_by_phase.values()) / 3600
    rate = Decimal(stage.pay_rate_per_hour)
    spend = (rate * Decimal(str(total_hours))).quantize(Decimal("0.01"))
    return {
        "hours": total_hours,
        "hours_by_phase": {phase: seconds_by_phase.get(phase, 0) / 3600 for phase in Phase.values},
        "median_minutes_per_item": {
            title: statistics.median(minutes_by_modality[modality])
            for modality, title in Item.Modality.choices
            if minutes_by_modality.get(modality)
        },
        "pay_rate_per_hour": str(rate),
        "currency": stage.currency,
        "spend": str(spend),
        "final_labels": final_labels,
        "cost_per_final_label": str(spend / final_labels) if final_labels else None,
    }


def workforce(stage: Stage) -> dict:
    enrolled = Enrollment.objects.filter(stage=stage)
    return {
        "pool": stage.pool,
        "task": stage.task,
        "recruits_per_subject": stage.recruits_per_subject,
        "recruited": enrolled.count(),
        "passed": enrolled.filter(gate_passed=True).count(),
        "pay_rate_per_hour": str(stage.pay_rate_per_hour),
        "currency": stage.currency,
        "overlap": stage.overlap,
        "resolution": stage.get_resolution_policy_display(),
    }


def project_agreement_report(project: AnnotationProject) -> dict:
    """Everything per stage the report needs, JSON-ready. Query count grows with stages, not labels."""
    labels = project_labels(project)
    items = {item.id: item for item in Item.objects.filter(project=project).only("id", "subject", "modality")}
    pseudonyms = annotator_pseudonyms(project)
    removed = removed_item_ids(project)
    revised = revised_label_counts(project)
    stages = []
    for stage in project.stages.order_by("order").prefetch_related("questions"):
        decisions = list(Adjudication.objects.filter(stage=stage))
        finals = {(d.item_id, d.question_id): d.final_value for d in decisions}
        final_labels = sum(1 for d in decisions if d.item_id not in removed)
        stages.append(
            {
                "id": stage.id,
                "order": stage.order,
                "name": stage.name,
                "workforce": workforce(stage),
                "agreement": stage_agreement(stage, labels, items),
                "annotators": annotator_agreement(stage, labels, finals, pseudonyms),
                "adjudication": stage_adjudication(stage, decisions),
                "distribution": stage_distribution(stage, decisions, removed),
                "volume": stage_volume(stage, labels, revised.get(stage.id, (0, 0))),
                "time_and_cost": stage_time_and_cost(stage, labels, items, final_labels),
            }
        )
    return {"stages": stages, "pseudonyms": len(pseudonyms)}
