"""The paper trail of an annotation project: workforce, gate, adjudication, agreement, conflicts and cost.

It has the shape of SafeTutors' Appendix D: workforce and pay per stage, training and the gate with pass rates,
adjudication with its rates, the agreement table (Fleiss' κ and Krippendorff's α per stage, subject, single- vs
multi-turn, before and after discussion; each annotator against the final labels), aggregation by annotator quality
beside the adjudicated finals (Dawid–Skene, GLAD, MACE: each annotator's competence, agreement with the finals and
gold), cross-stage conflicts and their dispositions, the label distribution after adjudication, label volume, and hours
and spend from recorded times and pay rates.

`project_report` builds one dict from the database, with exact numbers: it is the JSON report
(`report_json_ready`, the API's body and the JSON download). `annotation.report_sections` turns that dict
into the sections `report_markdown` and the HTML template render, so the three formats can never disagree.
`manage.py annotation_report PROJECT_ID` writes any of them.
"""

from __future__ import annotations

import json
from decimal import Decimal

from django.template.loader import render_to_string
from django.utils import timezone

from annotation.models import AnnotationProject, Item
from annotation.report_sections import report_sections, sections_markdown
from annotation.selectors import conflicts as conflict_workflow
from annotation.selectors.agreement_report import project_agreement_report
from annotation.selectors.crowd import crowd_link_of, crowd_recruits
from annotation.selectors.crowd_aggregation import QUALITY_TITLES, aggregation_methods, project_aggregation
from annotation.selectors.crowd_aggregation import USES as AGGREGATE_USES
from annotation.selectors.labelling_settings import labelling_settings
from annotation.selectors.projects import pass_rate_table
from annotation.selectors.training import stage_gate_rules
from annotation.services.labelling import stage_item_rule_describe

FORMATS = ("html", "md", "json")
CONVENTIONS = (
    "Agreement uses main-phase labels. Post-discussion agreement replaces an annotator's first answer by "
    "their post-discussion answer where they gave one.",
    "Unsure answers are left out of Fleiss' κ and Krippendorff's α (missing ratings); against the final "
    "labels they count as misses (strict rule).",
    "Fleiss' κ with unequal numbers of ratings per item is Gwet's (2014) generalisation; with equal numbers "
    "it is Fleiss (1971). α is computed with the krippendorff package at the question's level.",
    "Gwet's AC1 uses the ratings Fleiss' κ uses, the question's choices as its categories. For an ordinal question, "
    "AC2 stands beside it: linear weights over the scale's order (its choices equally spaced, as on the "
    "judge-validation report), on the ratings on the scale (those ordinal α uses); a nominal question has no AC2.",
    "Hours are the active time recorded per labelled item (time with the tab hidden excluded), pilot and "
    "qualification included; spend = hours × the stage's hourly rate, to the cent (the amount paid); the "
    "cost per final label is that spend over the final labels (exact in the JSON report, rounded on pages).",
    "Final labels of items removed for a cross-stage conflict are left out of the distribution and the "
    "cost per final label.",
    "An annotator may revise a main label while its item still waits for its labels (within the stage's "
    "revision window); agreement uses the final pre-discussion labels, and every earlier version is kept. "
    "The volume table states how many labels were revised.",
    f"Aggregation by annotator quality ({QUALITY_TITLES}, fitted with crowd-kit) uses the main phase's first "
    "answers with Unsure left out; a label is the value of highest posterior (a tie: the value listed first); its "
    "agreement with the finals and with gold is accuracy and Cohen's κ over the items that have both.",
    "Statistics in the JSON report are exact floats; the HTML and Markdown versions round them for display.",
)


def project_report(project: AnnotationProject) -> dict:
    agreement = project_agreement_report(project)
    pass_rates = {row["stage_id"]: row for row in pass_rate_table(project)}
    stages = agreement["stages"]
    gate = []
    for stage in project.stages.order_by("order"):
        row = pass_rates.get(stage.id, {})
        gate.append(
            {
                "stage": stage.name,
                "pilot_size": stage.pilot_size,
                "pilot_threshold": stage.pilot_threshold,
                "qualification": f"≥ {stage.qualification_min_correct} of {stage.qualification_size} correct",
                "unsure_rule": stage.get_unsure_rule_display(),
                "min_coverage": stage.unsure_min_coverage if stage.unsure_rule == "exclude" else None,
                "rules": stage_gate_rules(stage),
                "main_items": stage_item_rule_describe(labelling_settings(stage)),
                "recruited": row.get("recruited", 0),
                "passed": row.get("passed", 0),
                "failed": row.get("failed", 0),
                "replaced": row.get("replaced", 0),
                "in_training": row.get("in_training", 0),
                "pass_rate": row.get("pass_rate"),
                "pass_rate_text": row.get("pass_rate_text", ""),
            }
        )
    counts = conflict_workflow.disposition_counts(project)
    conflict_rows = [
        {
            "item": conflict.item.external_id,
            "earlier_stage": conflict.earlier_stage.name,
            "later_stage": conflict.later_stage.name,
            "earlier_value": conflict.detail.get("earlier_value"),
            "later_value": conflict.detail.get("later_value"),
            "disposition": conflict.get_disposition_display(),
            "note": conflict.note,
        }
        for conflict in project.conflicts.select_related("item", "earlier_stage", "later_stage").order_by("item_id")
    ]
    crowd = [
        {
            "stage": stage.name,
            "recruits": [
                {
                    "pseudonym": recruit.user.username,
                    "outcome": recruit.get_outcome_display() or "in progress",
                    "joined_at": recruit.created_at.isoformat(timespec="seconds"),
                }
                for recruit in crowd_recruits(stage)
            ],
        }
        for stage in project.stages.order_by("order")
        if crowd_link_of(stage) is not None
    ]
    spend_total = sum((Decimal(s["time_and_cost"]["spend"]) for s in stages), Decimal("0"))
    hours_total = sum(s["time_and_cost"]["hours"] for s in stages)
    final_total = sum(s["time_and_cost"]["final_labels"] for s in stages)
    return {
        "project": {"id": project.id, "name": project.name, "kind": project.kind, "preset": project.preset},
        "generated_at": timezone.now().isoformat(timespec="seconds"),
        "items": Item.objects.filter(project=project).count(),
        "conventions": list(CONVENTIONS),
        "stages": stages,
        # Which aggregate the final labels are, and the quality aggregates beside them (without their items).
        "aggregation": {
            "uses": AGGREGATE_USES,
            "methods": aggregation_methods(),
            "stages": project_aggregation(project),
        },
        "gate": gate,
        # Crowd recruits by pseudonym; their platform ids only in the researcher's crowd export.
        "crowd": crowd,
        "conflicts": {
            "summary": counts.describe(),
            "conflicts": counts.conflicts,
            "items_compared": counts.n_items or 0,
            "rate": counts.rate,
            "removed": counts.removed,
            "retained_with_flag": counts.retained_with_flag,
            "undecided": counts.undecided,
            "rows": conflict_rows,
        },
        "totals": {
            "hours": hours_total,
            "spend": str(spend_total),
            "final_labels": final_total,
            "cost_per_final_label": str(spend_total / final_total) if final_total else None,
            "labels": sum(s["volume"]["labels"] for s in stages),
        },
    }


def report_json_ready(report: dict) -> dict:
    """The report as JSON values (the API's body and the JSON download): Decimals and dates as text, floats exact."""
    return json.loads(json.dumps(report, default=str))


def report_json(report: dict) -> str:
    return json.dumps(report_json_ready(report), indent=2, ensure_ascii=False)


def report_markdown(report: dict) -> str:
    project = report["project"]
    out = [f"# Annotation report: {project['name']}", "", f"Generated {report['generated_at']}.", ""]
    return "\n".join(out + sections_markdown(report_sections(report)))


def report_html(report: dict, *, standalone: bool = True) -> str:
    """The report as HTML: a full page (standalone, for the command and downloads) or the page body."""
    return render_to_string(
        "annotation/reports/report_body.html" if not standalone else "annotation/reports/report_standalone.html",
        {"report": report, "sections": report_sections(report)},
    )


def render(report: dict, fmt_name: str) -> tuple[str, str]:
    """(body, content type) of the report in ``fmt_name`` (html | md | json)."""
    if fmt_name == "json":
        return report_json(report), "application/json"
    if fmt_name == "md":
        return report_markdown(report), "text/markdown; charset=utf-8"
    if fmt_name == "html":
        return report_html(report), "text/html; charset=utf-8"
    raise ValueError(f"format is one of {', '.join(FORMATS)}")
