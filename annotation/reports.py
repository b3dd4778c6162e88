"""The paper trail of an annotation project, in the shape of SafeTutors' Appendix D: workforce and pay per
stage, training and the gate with pass rates, adjudication with its rates, the agreement table (Fleiss' κ
and Krippendorff's α per stage, subject, single- vs multi-turn, before and after discussion; each
annotator against the final labels), cross-stage conflicts and their dispositions, the label
distribution after adjudication, label volume, and hours and spend from recorded times and pay rates.

`project_report` builds one JSON-ready dict from the database; `report_markdown` and `report_html` render
that same dict, so the three formats can never disagree. `manage.py annotation_report PROJECT_ID` writes
any of them.
"""

from __future__ import annotations

import json
from decimal import Decimal

from django.template.loader import render_to_string
from django.utils import timezone

from annotation.models import AnnotationProject, Item
from annotation.selectors.agreement_report import project_agreement_report
from annotation.selectors.crowd import crowd_link_of, crowd_recruits
from annotation.selectors.projects import pass_rate_table
from annotation.selectors.training import stage_gate_rules
from annotation.services import conflicts as conflict_workflow
from annotation.services.assignment import labelling_settings
from annotation.services.labelling import stage_item_rule_describe

FORMATS = ("html", "md", "json")
CONVENTIONS = (
    "Agreement uses main-phase labels. Post-discussion agreement replaces an annotator's first answer by "
    "their post-discussion answer where they gave one.",
    "Unsure answers are left out of Fleiss' κ and Krippendorff's α (missing ratings); against the final "
    "labels they count as misses (strict rule).",
    "Fleiss' κ with unequal numbers of ratings per item is Gwet's (2014) generalisation; with equal numbers "
    "it is Fleiss (1971). α is computed with the krippendorff package at the question's level.",
    "Hours are the active time recorded per labelled item (time with the tab hidden excluded), pilot and "
    "qualification included; spend = hours × the stage's hourly rate, to the cent (the amount paid); the "
    "cost per final label is that spend over the final labels (exact in the JSON report, rounded on pages).",
    "Final labels of items removed for a cross-stage conflict are left out of the distribution and the "
    "cost per final label.",
    "An annotator may revise a main label while its item still waits for its labels (within the stage's "
    "revision window); agreement uses the final pre-discussion labels, and every earlier version is kept. "
    "The volume table states how many labels were revised.",
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
    return json.loads(json.dumps(report, default=str))


def report_json(report: dict) -> str:
    return json.dumps(report, indent=2, ensure_ascii=False, default=str)


def money(value: str | None, places: int = 4) -> str:
    """A Decimal amount from the report for a table, rounded to ``places``; "—" when there is none."""
    if value is None:
        return "—"
    return str(Decimal(value).quantize(Decimal(1).scaleb(-places)))


def fmt(value, digits: int = 3) -> str:
    """A statistic for a table: the number, or "undefined" (never a silent 0 or 1)."""
    if value is None:
        return "undefined"
    return f"{value:.{digits}f}"


def _stat(cell: dict, name: str) -> str:
    result = cell[name]
    return fmt(result["value"]) + (f" (n={result['n_units']})" if result["value"] is not None else "")


def agreement_table_rows(report: dict) -> list[dict]:
    """Flat rows of the agreement table, shared by the Markdown and HTML renderings."""
    rows = []
    for stage in report["stages"]:
        for question in stage["agreement"]:
            for group in question["groups"]:
                rows.append(
                    {
                        "stage": stage["name"],
                        "question": question["question"],
                        "group": group["group"] if group["kind"] == "all" else f"{group['kind']}: {group['group']}",
                        "items": group["pre"]["items"],
                        "kappa_pre": _stat(group["pre"], "fleiss_kappa"),
                        "alpha_pre": _stat(group["pre"], "krippendorff_alpha"),
                        "kappa_post": _stat(group["post"], "fleiss_kappa") if question["has_post_discussion"] else "—",
                        "alpha_post": _stat(group["post"], "krippendorff_alpha")
                        if question["has_post_discussion"]
                        else "—",
                    }
                )
    return rows


def _table(header: list[str], rows: list[list]) -> list[str]:
    def cell(value) -> str:
        return str(value).replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return lines + [""]


def report_markdown(report: dict) -> str:
    project = report["project"]
    out = [f"# Annotation report: {project['name']}", "", f"Generated {report['generated_at']}.", ""]
    out += ["## Workforce and pay", ""]
    out += _table(
        ["Stage", "Pool", "Per subject", "Recruited", "Passed", "Pay / h", "Overlap", "Resolution"],
        [
            [
                s["name"],
                s["workforce"]["pool"] or "—",
                s["workforce"]["recruits_per_subject"],
                s["workforce"]["recruited"],
                s["workforce"]["passed"],
                f"{s['workforce']['pay_rate_per_hour']} {s['workforce']['currency']}",
                s["workforce"]["overlap"],
                s["workforce"]["resolution"],
            ]
            for s in report["stages"]
        ],
    )
    for link in report["crowd"]:
        out += [f"Crowd recruits of {link['stage']} (by pseudonym; platform ids in the crowd export):", ""]
        rows = [[r["pseudonym"], r["outcome"], r["joined_at"]] for r in link["recruits"]]
        out += _table(["Pseudonym", "Outcome", "Joined"], rows)
    out += ["## Training and gate", ""]
    out += _table(
        [
            "Stage",
            "Pilot",
            "Pilot ≥",
            "Qualification",
            "Unsure rule",
            "Recruited",
            "Passed",
            "Failed",
            "Replaced",
            "Pass rate",
        ],
        [
            [
                g["stage"],
                g["pilot_size"],
                f"{g['pilot_threshold']:.0%}",
                g["qualification"],
                g["unsure_rule"],
                g["recruited"],
                g["passed"],
                g["failed"],
                g["replaced"],
                g["pass_rate_text"],
            ]
            for g in report["gate"]
        ],
    )
    out += [
        f"- {g['stage']}: {g['rules']['pilot']} {g['rules']['qualification']} Main items: {g['main_items']}"
        for g in report["gate"]
    ] + [""]
    out += ["## Adjudication", ""]
    out += _table(
        [
            "Stage",
            "Policy",
            "Items complete",
            "Unanimous",
            "Majority",
            "Discussion",
            "Senior/reviewer",
            "Waiting",
            "Rate",
        ],
        [
            [
                s["name"],
                s["adjudication"]["policy"],
                f"{s['adjudication']['items_complete']:,}",
                s["adjudication"]["by_method"]["unanimous"],
                s["adjudication"]["by_method"]["majority"],
                s["adjudication"]["by_method"]["discussion"],
                s["adjudication"]["by_method"]["senior"],
                sum(s["adjudication"]["waiting"].values()),
                s["adjudication"]["headline"],
            ]
            for s in report["stages"]
        ],
    )
    out += ["## Agreement", ""]
    out += _table(
        ["Stage", "Question", "Items", "Group", "Fleiss κ (pre)", "Krippendorff α (pre)", "κ (post)", "α (post)"],
        [
            [
                r["stage"],
                r["question"],
                r["items"],
                r["group"],
                r["kappa_pre"],
                r["alpha_pre"],
                r["kappa_post"],
                r["alpha_post"],
            ]
            for r in agreement_table_rows(report)
        ],
    )
    out += ["### Each annotator against the final labels", ""]
    out += _table(
        ["Stage", "Annotator", "Compared", "Agreement"],
        [
            [s["name"], a["annotator"], a["compared"], fmt(a["agreement"])]
            for s in report["stages"]
            for a in s["annotators"]
        ],
    )
    out += ["## Cross-stage conflicts", "", report["conflicts"]["summary"], ""]
    if report["conflicts"]["rows"]:
        out += _table(
            ["Item", "Earlier stage", "Value", "Later stage", "Value", "Disposition", "Note"],
            [
                [
                    c["item"],
                    c["earlier_stage"],
                    c["earlier_value"],
                    c["later_stage"],
                    c["later_value"],
                    c["disposition"],
                    c["note"],
                ]
                for c in report["conflicts"]["rows"]
            ],
        )
    out += ["## Label distribution after adjudication", ""]
    out += _table(
        ["Stage", "Question", "Value", "Count", "Share"],
        [
            [s["name"], d["question"], v["label"], v["count"], fmt(v["share"], 3)]
            for s in report["stages"]
            for d in s["distribution"]
            for v in d["values"]
        ],
    )
    out += ["## Volume", ""]
    out += _table(
        [
            "Stage",
            "Labels",
            "Pilot",
            "Qualification",
            "Main",
            "Post-discussion",
            "Revised",
            "Items labelled",
            "Annotators",
        ],
        [
            [
                s["name"],
                f"{s['volume']['labels']:,}",
                s["volume"]["by_phase"]["pilot"],
                s["volume"]["by_phase"]["qualification"],
                s["volume"]["by_phase"]["main"],
                s["volume"]["post_discussion"],
                f"{s['volume']['revised_labels']} ({s['volume']['revisions']} earlier versions kept)",
                s["volume"]["items_labelled"],
                s["volume"]["annotators"],
            ]
            for s in report["stages"]
        ],
    )
    out += ["## Hours and spend", ""]
    out += _table(
        ["Stage", "Hours", "Median min/item", "Rate / h", "Spend", "Final labels", "Cost per final label"],
        [
            [
                s["name"],
                fmt(s["time_and_cost"]["hours"], 2),
                ", ".join(f"{k}: {fmt(v, 2)}" for k, v in s["time_and_cost"]["median_minutes_per_item"].items()) or "—",
                f"{s['time_and_cost']['pay_rate_per_hour']} {s['time_and_cost']['currency']}",
                s["time_and_cost"]["spend"],
                s["time_and_cost"]["final_labels"],
                money(s["time_and_cost"]["cost_per_final_label"]),
            ]
            for s in report["stages"]
        ]
        + [
            [
                "Total",
                fmt(report["totals"]["hours"], 2),
                "",
                "",
                report["totals"]["spend"],
                report["totals"]["final_labels"],
                money(report["totals"]["cost_per_final_label"]),
            ]
        ],
    )
    out += ["## Conventions", ""] + [f"- {c}" for c in report["conventions"]] + [""]
    return "\n".join(out)


def report_html(report: dict, *, standalone: bool = True) -> str:
    """The report as HTML: a full page (standalone, for the command and downloads) or the page body."""
    return render_to_string(
        "annotation/reports/report_body.html" if not standalone else "annotation/reports/report_standalone.html",
        {"report": report, "agreement_rows": agreement_table_rows(report)},
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
