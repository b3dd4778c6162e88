"""Exports of every label of a project with its provenance, as CSV or JSONL; and its soft labels.

The provenance is the annotator pseudonym, stage, phase, round, time and justification; the Label Studio tasks and label
config come from `annotation.label_studio.export`.

CSV cells that a spreadsheet would read as a formula (starting with = + - @, or a tab or carriage return)
are prefixed with an apostrophe (OWASP's advice against CSV injection); JSON is left exact.

Besides the annotators' labels, the CSV and JSONL hold a row per gold label, per label imported from a
published file and per settled consensus (the ``record`` column says which; those rows name no annotator).

The judge-validation report exports as CSV (a row per metric and judge: the verdict with its named rule, κ, α,
AC1/AC2, the alt-test with each annotator's BY-adjusted p in its own columns, and the judge's direction, each with
its interval; then the label planner's row of the metric and judge and the validation planner, the same in every
row) or JSON (the whole report, both planners with it).

The same doors serve the soft labels of every aggregation method (`annotation.soft_label_exports`: ``soft-csv``,
``soft-jsonl``, ``soft-parquet``).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator

from django.db.models import Count

from annotation.label_studio.export import FORMATS as LABEL_STUDIO_FORMATS
from annotation.label_studio.export import label_studio_export
from annotation.models import Adjudication, AnnotationProject, GoldLabel, Label
from annotation.selectors.agreement_report import annotator_pseudonyms
from annotation.soft_label_exports import SOFT_LABEL_FORMATS, export_soft_labels
from edufair_web.csv_cells import neutralise_cell

FORMATS = ("csv", "jsonl", *LABEL_STUDIO_FORMATS, *SOFT_LABEL_FORMATS)
FIELDS = (
    "project",
    "item_id",
    "external_id",
    "subject",
    "category",
    "modality",
    "stage",
    "stage_name",
    "phase",
    "round",
    "question",
    "value",
    "unsure",
    "justification",
    "seconds",
    "annotator",
    "labelled_at",
    "revisions",
    "final_value",
    "final_method",
    "conflict",
    "record",
)
# What a row is: an annotator's label, a gold label (training items), a label imported from a published
# file (the consensus of an imported project), or a settled consensus (adjudication) of an item.
RECORD_LABEL, RECORD_GOLD, RECORD_IMPORTED, RECORD_CONSENSUS = "label", "gold", "imported", "consensus"


def label_records(project: AnnotationProject) -> Iterator[dict]:
    """One record per label, in a stable order; real names never leave, pseudonyms do."""
    pseudonyms = annotator_pseudonyms(project)
    finals = {
        (a.stage_id, a.item_id, a.question_id): a
        for a in Adjudication.objects.filter(stage__project=project).only(
            "stage_id", "item_id", "question_id", "final_value", "method"
        )
    }
    dispositions = {c.item_id: c.disposition for c in project.conflicts.only("item_id", "disposition")}
    labels = (
        Label.objects.filter(assignment__stage__project=project, assignment__submitted_at__isnull=False)
        .select_related("assignment__item", "assignment__stage", "question")
        .annotate(earlier_versions=Count("revisions"))
        .order_by("assignment__stage__order", "assignment__item_id", "question__position", "assignment_id", "round")
    )
    for label in labels.iterator(chunk_size=2000):
        assignment = label.assignment
        item = assignment.item
        final = finals.get((assignment.stage_id, item.id, label.question_id))
        yield {
            "project": project.id,
            "item_id": item.id,
            "external_id": item.external_id,
            "subject": item.subject,
            "category": item.category,
            "modality": item.modality,
            "stage": assignment.stage.order,
            "stage_name": assignment.stage.name,
            "phase": label.phase,
            "round": label.round,
            "question": label.question.key,
            "value": None if label.unsure else label.value,
            "unsure": label.unsure,
            "justification": label.justification,
            "seconds": label.seconds,
            "annotator": pseudonyms.get(assignment.annotator_id, f"U{assignment.annotator_id}"),
            "labelled_at": label.created_at.isoformat(),
            "revisions": label.earlier_versions,  # earlier versions the annotator replaced (LabelRevision)
            "final_value": final.final_value if final else None,
            "final_method": final.method if final else None,
            "conflict": dispositions.get(item.id),
            "record": RECORD_LABEL,
        }


def _item_fields(project: AnnotationProject, item) -> dict:
    return {
        "project": project.id,
        "item_id": item.id,
        "external_id": item.external_id,
        "subject": item.subject,
        "category": item.category,
        "modality": item.modality,
    }


def reference_records(project: AnnotationProject) -> Iterator[dict]:
    """The project's reference values, in the labels' layout with no annotator: every gold label (the
    imported labels of an imported project, which are its consensus) and every settled consensus."""
    dispositions = {c.item_id: c.disposition for c in project.conflicts.only("item_id", "disposition")}
    gold = (
        GoldLabel.objects.filter(item__project=project)
        .select_related("item", "question")
        .order_by("item_id", "question__position")
    )
    for row in gold.iterator(chunk_size=2000):
        imported = (row.item.metadata or {}).get("role") == "imported"
        yield {
            **_item_fields(project, row.item),
            **dict.fromkeys(("stage", "stage_name", "phase", "round", "seconds", "annotator", "revisions"), None),
            "question": row.question.key,
            "value": row.value,
            "unsure": False,
            "justification": row.rationale,
            "labelled_at": row.created_at.isoformat(),
            "final_value": row.value if imported else None,
            "final_method": RECORD_IMPORTED if imported else None,
            "conflict": dispositions.get(row.item_id),
            "record": RECORD_IMPORTED if imported else RECORD_GOLD,
        }
    finals = (
        Adjudication.objects.filter(stage__project=project)
        .exclude(final_value="")
        .select_related("item", "question", "stage")
        .order_by("stage__order", "item_id", "question__position")
    )
    for row in finals.iterator(chunk_size=2000):
        yield {
            **_item_fields(project, row.item),
            "stage": row.stage.order,
            "stage_name": row.stage.name,
            **dict.fromkeys(("phase", "round", "seconds", "annotator", "revisions"), None),
            "question": row.question.key,
            "value": row.final_value,
            "unsure": False,
            "justification": row.note,
            "labelled_at": row.created_at.isoformat(),
            "final_value": row.final_value,
            "final_method": row.method,
            "conflict": dispositions.get(row.item_id),
            "record": RECORD_CONSENSUS,
        }


def export_records(project: AnnotationProject) -> Iterator[dict]:
    """What the CSV and JSONL exports hold: every label, then every gold, imported and consensus value."""
    yield from label_records(project)
    yield from reference_records(project)


def labels_csv(project: AnnotationProject) -> str:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(FIELDS)
    for record in export_records(project):
        writer.writerow([neutralise_cell(record[field]) for field in FIELDS])
    return out.getvalue()


def labels_jsonl(project: AnnotationProject) -> str:
    return "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in export_records(project))


def export_labels(project: AnnotationProject, fmt: str) -> tuple[str | bytes, str, str]:
    """(body, content type, file name) of the labels export in ``fmt``."""
    stem = f"annotation-{project.id}-labels"
    if fmt == "csv":
        return labels_csv(project), "text/csv; charset=utf-8", f"{stem}.csv"
    if fmt == "jsonl":
        return labels_jsonl(project), "application/x-ndjson", f"{stem}.jsonl"
    if fmt in LABEL_STUDIO_FORMATS:
        return label_studio_export(project, fmt)
    if fmt in SOFT_LABEL_FORMATS:
        return export_soft_labels(project, fmt)
    raise ValueError(f"format is one of {', '.join(FORMATS)}")


# --- The judge-validation report -------------------------------------------------------------------

JUDGE_VALIDATION_FORMATS = ("csv", "json")
JUDGE_VALIDATION_FIELDS = (
    "metric",
    "judge",
    "verdict_rule",
    "verdict",
    "verdict_reasons",
    "n_compared",
    "kappa_linear",
    "kappa_low",
    "kappa_high",
    "kappa_units",
    "human_alpha",
    "human_alpha_low",
    "human_alpha_high",
    "human_alpha_items_with_two_or_more",
    "human_alpha_pairable_values",
    "ac1",
    "ac1_low",
    "ac1_high",
    "ac2_linear",
    "ac2_low",
    "ac2_high",
    "prevalence_warning",
    "alt_test_epsilon",
    "alt_test_omega",
    "alt_test_rho",
    "alt_test_passed",
    "alt_test_unmet",
    "mean_judge_minus_human",
    "mean_difference_low",
    "mean_difference_high",
    "tutor_rank_tau",
    "tutor_rank_tau_low",
    "tutor_rank_tau_high",
    "condition_rank_tau",
    "condition_rank_tau_low",
    "condition_rank_tau_high",
)


ALT_TEST_ANNOTATOR_FIELDS = ("n_items", "advantage", "p_value", "p_adjusted", "rejected")
"""Per annotator of the alt-test, a column each: its items, the judge's advantage ρ_j, the one-sided p, the p
adjusted by Benjamini–Yekutieli across the annotators, and whether the test rejected (the judge may replace them)."""


LABEL_PLANNER_FIELDS = (
    "planner_target_half_width",
    "planner_n_pairs",
    "planner_error_sd",
    "planner_per_side",
    "planner_per_stratum",
    "planner_predicted_half_width",
    "planner_note",
)
"""The label planner's row of the metric and judge (``planner``): the target half-width of a judge-corrected
contrast's interval, the (judge, consensus) pairs its error SD rests on, and the human labels per side and per
stratum it needs."""
VALIDATION_PLAN_INPUTS = ("judge_accuracy", "annotator_accuracy", "kappa", "prevalence", "kappa_half_width")
VALIDATION_PLAN_FIELDS = (
    "plan_epsilon",
    "plan_target",
    *(f"plan_{name}" for name in VALIDATION_PLAN_INPUTS),
    "plan_kappa_items",
    "plan_kappa_note",
)
"""The validation planner (``validation_plan``, the same in every row): its inputs, the alt-test's ε and target pass
probability, and the items for κ's interval to reach the half-width; then ``plan_alt_test_items_<n>_annotators``, the
items per annotator the alt-test needs with n annotators (empty: more than the largest size tried)."""


def _validation_plan_columns(report: dict) -> dict:
    """The validation planner's columns: `VALIDATION_PLAN_FIELDS`, then one per number of annotators planned."""
    plan = report.get("validation_plan") or {}
    inputs = plan.get("inputs") or {}
    return {
        "plan_epsilon": plan.get("epsilon"),
        "plan_target": plan.get("target"),
        **{f"plan_{name}": inputs.get(name) for name in VALIDATION_PLAN_INPUTS},
        "plan_kappa_items": plan.get("kappa_items"),
        "plan_kappa_note": plan.get("kappa_note"),
        **{
            f"plan_alt_test_items_{row['n_annotators']}_annotators": row.get("items_per_annotator")
            for row in plan.get("alt_test") or []
        },
    }


def _label_planner_columns(report: dict) -> dict[tuple[str, str], dict]:
    """(metric, judge key) → the label planner's columns of that row (`LABEL_PLANNER_FIELDS`)."""
    planner = report.get("planner") or {}
    return {
        (row["metric"], row["judge_key"]): {
            "planner_target_half_width": planner.get("target_half_width"),
            **{field: row.get(field.removeprefix("planner_")) for field in LABEL_PLANNER_FIELDS[1:]},
        }
        for row in planner.get("rows") or []
    }


def _alt_test_annotators(report: dict) -> list[str]:
    """Every annotator the report's alt-tests compared the judge with, in order (their pseudonyms)."""
    found = {
        a["annotator"]
        for row in report["metrics"]
        for judge_layers in ((row.get("layers") or {}).get("judges") or {}).values()
        for a in ((judge_layers.get("judge_vs_humans") or {}).get("alt_test") or {}).get("per_annotator") or []
    }
    return sorted(found)


def judge_validation_fields(report: dict) -> tuple[str, ...]:
    """The CSV's columns: `JUDGE_VALIDATION_FIELDS`, then ``alt_test_<annotator>_<field>`` for every annotator the
    alt-tests compared and every `ALT_TEST_ANNOTATOR_FIELDS` (empty where a metric's test did not compare them),
    then the label planner's (`LABEL_PLANNER_FIELDS`) and the validation planner's columns (`VALIDATION_PLAN_FIELDS`
    and one per number of annotators planned)."""
    per_annotator = tuple(
        f"alt_test_{annotator}_{field}"
        for annotator in _alt_test_annotators(report)
        for field in ALT_TEST_ANNOTATOR_FIELDS
    )
    per_size = tuple(c for c in _validation_plan_columns(report) if c not in VALIDATION_PLAN_FIELDS)
    return JUDGE_VALIDATION_FIELDS + per_annotator + LABEL_PLANNER_FIELDS + VALIDATION_PLAN_FIELDS + per_size


def judge_validation_rows(report: dict) -> Iterator[dict]:
    """One row per metric and judge of a judge-validation report: the verdict under its named rule, the three
    layers' headline numbers with their intervals, and the alt-test per annotator (`judge_validation_fields`; the
    JSON export holds everything, per stratum too)."""
    names = {judge["key"]: judge["name"] for judge in report["judges"]}
    plan, planned = _validation_plan_columns(report), _label_planner_columns(report)
    for row in report["metrics"]:
        layers = row.get("layers") or {}
        alpha = (layers.get("human_ceiling") or {}).get("human_alpha") or {}
        for key, section in row["judges"].items():
            judge_layers = (layers.get("judges") or {}).get(key) or {}
            versus = judge_layers.get("judge_vs_humans") or {}
            way = judge_layers.get("direction") or {}
            alt = versus.get("alt_test") or {}
            kappa, verdict = section["kappa_linear"], section["verdict"]
            ranks = way.get("rank_agreement") or {}
            tutor, condition = ranks.get("tutor") or {}, ranks.get("condition") or {}
            mean = way.get("mean_difference") or {}
            units = row["human_alpha_pre"].get("units") or {}
            yield {
                "metric": row["metric"],
                "judge": names.get(key, key),
                "verdict_rule": verdict["rule"],
                "verdict": verdict["outcome"],
                "verdict_reasons": "; ".join(verdict["reasons"]),
                "n_compared": section["n_compared"],
                "kappa_linear": kappa.get("value"),
                "kappa_low": kappa.get("ci_low"),
                "kappa_high": kappa.get("ci_high"),
                "kappa_units": f"{kappa.get('n_units', 0)} {kappa.get('units', '')}",
                "human_alpha": row["human_alpha_pre"].get("value"),
                "human_alpha_low": alpha.get("low"),
                "human_alpha_high": alpha.get("high"),
                "human_alpha_items_with_two_or_more": units.get("items_pairable"),
                "human_alpha_pairable_values": units.get("pairable_values"),
                "ac1": (versus.get("ac1") or {}).get("estimate"),
                "ac1_low": (versus.get("ac1") or {}).get("low"),
                "ac1_high": (versus.get("ac1") or {}).get("high"),
                "ac2_linear": (versus.get("ac2_linear") or {}).get("estimate"),
                "ac2_low": (versus.get("ac2_linear") or {}).get("low"),
                "ac2_high": (versus.get("ac2_linear") or {}).get("high"),
                "prevalence_warning": versus.get("prevalence_warning", ""),
                "alt_test_epsilon": alt.get("epsilon"),
                "alt_test_omega": alt.get("omega"),
                "alt_test_rho": alt.get("rho"),
                "alt_test_passed": alt.get("passed"),
                "alt_test_unmet": "; ".join(alt.get("unmet") or []),
                "mean_judge_minus_human": mean.get("estimate"),
                "mean_difference_low": mean.get("low"),
                "mean_difference_high": mean.get("high"),
                "tutor_rank_tau": tutor.get("estimate"),
                "tutor_rank_tau_low": tutor.get("low"),
                "tutor_rank_tau_high": tutor.get("high"),
                "condition_rank_tau": condition.get("estimate"),
                "condition_rank_tau_low": condition.get("low"),
                "condition_rank_tau_high": condition.get("high"),
                **{
                    f"alt_test_{a['annotator']}_{field}": a.get(field)
                    for a in alt.get("per_annotator") or []
                    for field in ALT_TEST_ANNOTATOR_FIELDS
                },
                **planned.get((row["metric"], key), {}),
                **plan,
            }


def export_judge_validation(report: dict, fmt: str) -> tuple[str, str, str]:
    """(body, content type, file name) of a judge-validation report in ``fmt``: CSV (a row per metric and judge,
    the verdict's rule in every row, the alt-test's BY-adjusted p per annotator in its columns, the planners in theirs)
    or JSON (the whole report with its ``planner`` and ``validation_plan``, exact floats, its rule at the top)."""
    stem = f"judge-validation-{report['project']['id']}-{report['rubric']['label'].replace(' ', '-')}"
    if fmt == "json":
        return json.dumps(report, ensure_ascii=False, default=str), "application/json", f"{stem}.json"
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.writer(out)
        fields = judge_validation_fields(report)
        writer.writerow(fields)
        for record in judge_validation_rows(report):
            writer.writerow([neutralise_cell("" if record.get(f) is None else record[f]) for f in fields])
        return out.getvalue(), "text/csv; charset=utf-8", f"{stem}.csv"
    raise ValueError(f"format is one of {', '.join(JUDGE_VALIDATION_FORMATS)}")
