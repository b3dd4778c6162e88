"""The annotation report's display form: sections with rounded numbers, and their Markdown (pure).

This is the Appendix-D report: `report_sections` turns the report's data (`annotation.reports`' dict, exact numbers)
into sections of titled paragraphs, tables and lists with every number rounded for reading, and `sections_markdown`
writes them as Markdown; the HTML template renders the same sections, so the page, the HTML download and the Markdown
cannot disagree.

Pure: plain dicts in, dataclasses and text out; no database, no Django.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import ClassVar

from annotation.agreement_units import p_below_text, units_text

# --- display rounding --------------------------------------------------------------------------------


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
    """A coefficient with its interval where it has one (α's also with its probabilities of falling under 0.667 and
    0.800), and its own three counts (`annotation.agreement_units`): items rated, items with ≥ 2 ratings, pairable
    values — κ and α count different things."""
    result = cell[name]
    counts = f" ({units_text(result['units'])})" if result.get("units") else ""
    if result["value"] is None:
        return "undefined" + counts
    text = fmt(result["value"])
    if result.get("low") is not None:
        text += f" [{fmt(result['low'])}, {fmt(result['high'])}]"
        if result.get("p_below"):
            text += f"; {p_below_text(result['p_below'])}"
    return text + counts


# --- the parts of a section --------------------------------------------------------------------------
# `marker` names a data-* attribute the HTML puts on the element (pages and browser tests find it by it).


@dataclass(frozen=True)
class Cell:
    text: str
    marker: str = ""


@dataclass(frozen=True)
class Row:
    cells: tuple[Cell, ...]
    marker: str = ""
    marker_value: str = ""
    total: bool = False  # the closing total row: its first cell is a heading


@dataclass(frozen=True)
class Table:
    columns: tuple[str, ...]
    rows: tuple[Row, ...]
    marker: str = ""
    empty: str = ""  # said instead of rows when there are none
    kind: ClassVar[str] = "table"


@dataclass(frozen=True)
class Paragraph:
    text: str
    marker: str = ""
    muted: bool = False
    kind: ClassVar[str] = "paragraph"


@dataclass(frozen=True)
class Span:
    """A piece of a list item's text: plain, strong, or marked."""

    text: str
    strong: bool = False
    marker: str = ""


@dataclass(frozen=True)
class BulletList:
    items: tuple[tuple[Span, ...], ...]
    marker: str = ""
    css_class: str = ""
    kind: ClassVar[str] = "list"


@dataclass(frozen=True)
class Section:
    title: str
    blocks: tuple[Table | Paragraph | BulletList, ...]
    level: int = 2  # 2: a part of the report; 3: a part of the section before it


def _text(value) -> str:
    return str(value)


def _row(values: Sequence, markers: Sequence[str] = (), **row) -> Row:
    markers = tuple(markers) + ("",) * (len(values) - len(markers))
    return Row(tuple(Cell(_text(v), m) for v, m in zip(values, markers, strict=True)), **row)


def _table(columns: Sequence[str], rows: Sequence[Row], **table) -> Table:
    return Table(tuple(columns), tuple(rows), **table)


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


# --- the sections ------------------------------------------------------------------------------------


CROWD_NOTE = "By pseudonym; their platform ids are only in the researcher's crowd export."


def _workforce(report: dict) -> list[Section]:
    rows = [
        _row(
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
        )
        for s in report["stages"]
    ]
    columns = ["Stage", "Pool", "Per subject", "Recruited", "Passed", "Pay / h", "Overlap", "Resolution"]
    sections = [Section("Workforce and pay", (_table(columns, rows),))]
    for link in report["crowd"]:
        recruits = [_row([r["pseudonym"], r["outcome"], r["joined_at"]]) for r in link["recruits"]]
        sections.append(
            Section(
                f"Crowd recruits of {link['stage']}",
                (
                    Paragraph(
                        "By pseudonym; their platform ids are only in the researcher's crowd export.", muted=True
                    ),
                    _table(
                        ["Pseudonym", "Outcome", "Joined"], recruits, marker="crowd-recruits", empty="No recruit yet."
                    ),
                ),
                level=3,
            )
        )
    return sections


def _gate(report: dict) -> Section:
    columns = [
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
    ]
    rows = [
        _row(
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
        )
        for g in report["gate"]
    ]
    rules = BulletList(
        tuple(
            (
                Span(g["stage"], strong=True),
                Span(f": {g['rules']['pilot']} {g['rules']['qualification']} Main items: "),
                Span(g["main_items"], marker="main-items"),
            )
            for g in report["gate"]
        ),
        marker="gate-rules",
        css_class="gate-rules",
    )
    return Section("Training and gate", (_table(columns, rows), rules))


def _adjudication(report: dict) -> Section:
    columns = [
        "Stage",
        "Policy",
        "Items complete",
        "Unanimous",
        "Majority",
        "Discussion",
        "Senior / reviewer",
        "Waiting",
        "Rate",
    ]
    rows = [
        _row(
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
            ],
            markers=[""] * 8 + ["rate"],
            marker="adjudication-stage",
            marker_value=str(s["order"]),
        )
        for s in report["stages"]
    ]
    return Section("Adjudication", (_table(columns, rows),))


def _agreement(report: dict) -> list[Section]:
    rows = []
    for stage in report["stages"]:
        for question in stage["agreement"]:
            post = question["has_post_discussion"]
            for group in question["groups"]:
                rows.append(
                    _row(
                        [
                            stage["name"],
                            question["question"],
                            group["group"] if group["kind"] == "all" else f"{group['kind']}: {group['group']}",
                            group["pre"]["items"],
                            _stat(group["pre"], "fleiss_kappa"),
                            _stat(group["pre"], "krippendorff_alpha"),
                            _stat(group["pre"], "gwet_ac1") if "gwet_ac1" in group["pre"] else "—",
                            _stat(group["pre"], "gwet_ac2_linear") if "gwet_ac2_linear" in group["pre"] else "—",
                            _stat(group["post"], "fleiss_kappa") if post else "—",
                            _stat(group["post"], "krippendorff_alpha") if post else "—",
                        ],
                        markers=["", "", "", "", "kappa-pre"],
                    )
                )
    columns = [
        "Stage",
        "Question",
        "Group",
        "Items",
        "Fleiss κ (pre) [95 % interval]",
        "Krippendorff α (pre) [95 % interval]",
        "Gwet's AC1 (pre) [95 % interval]",
        "Gwet's AC2, linear weights (pre, ordinal questions) [95 % interval]",
        "κ (post)",
        "α (post)",
    ]
    annotators = [
        _row([s["name"], a["annotator"], a["compared"], fmt(a["agreement"])])
        for s in report["stages"]
        for a in s["annotators"]
    ]
    return [
        Section("Agreement", (_table(columns, rows, marker="agreement"), *_prevalence(report))),
        Section(
            "Each annotator against the final labels",
            (_table(["Stage", "Annotator", "Compared", "Agreement"], annotators),),
            level=3,
        ),
    ]


def _prevalence(report: dict) -> tuple[Paragraph | BulletList, ...]:
    """The κ-paradox warnings of the agreement table (`annotation.gwet.prevalence_warning`, with the class shares),
    one per cell whose κ and AC1 differ by more than the margin; else the rule and that no cell met it."""
    warnings, margin = [], None
    for stage in report["stages"]:
        for question in stage["agreement"]:
            for group in question["groups"]:
                name = group["group"] if group["kind"] == "all" else f"{group['kind']}: {group['group']}"
                rounds = ("pre", "post") if question["has_post_discussion"] else ("pre",)
                for round_ in rounds:
                    cell = group[round_]
                    margin = cell.get("prevalence_margin", margin)
                    if cell.get("prevalence_warning"):
                        where = f"{stage['name']}, {question['question']}, {name} ({round_}-discussion)"
                        warnings.append((Span(where, strong=True), Span(f": {cell['prevalence_warning']}")))
    if warnings:
        return (BulletList(tuple(warnings), marker="prevalence-warnings"),)
    if margin is None:  # no cell carries the rule (nothing labelled yet)
        return ()
    text = f"No cell's Fleiss κ and Gwet's AC1 differ by more than {margin:.2f}: no κ-paradox warning."
    return (Paragraph(text, marker="prevalence-warnings", muted=True),)


def _aggregation(report: dict) -> list[Section]:
    """Which aggregate the final labels are, the quality aggregates beside them against the finals and gold, and each
    annotator's competence under every method (one column per method, in the report's order)."""
    aggregation = report["aggregation"]
    methods = aggregation["methods"]
    rows, competence = [], []
    for stage in aggregation["stages"]:
        for question in stage["questions"]:
            by_method = {m["method"]: m for m in question["methods"]}
            for method in methods:
                found = by_method[method["key"]]
                final, gold = found["versus_final"], found["versus_gold"]
                rows.append(
                    _row(
                        [
                            stage["name"],
                            question["question"],
                            method["title"],
                            question["items"],
                            _versus(final, "accuracy"),
                            _versus(final, "cohen_kappa"),
                            _versus(gold, "accuracy"),
                            _versus(gold, "cohen_kappa"),
                        ],
                        marker="aggregation-method",
                        marker_value=method["key"],
                    )
                )
            annotators: dict[str, dict[str, float]] = {}
            for method in question["methods"]:
                for row in method["annotators"]:
                    annotators.setdefault(row["annotator"], {})[method["method"]] = row["competence"]
            for name in sorted(annotators):
                values = [fmt(annotators[name].get(m["key"])) if m["key"] in annotators[name] else "—" for m in methods]
                competence.append(_row([stage["name"], question["question"], name, *values]))
    columns = [
        "Stage",
        "Question",
        "Method",
        "Items",
        "Accuracy vs final",
        "Cohen κ vs final",
        "Accuracy vs gold",
        "Cohen κ vs gold",
    ]
    what = BulletList(tuple((Span(m["title"], strong=True), Span(f": {m['competence']}.")) for m in methods))
    return [
        Section(
            "Aggregation by annotator quality",
            (
                Paragraph(aggregation["uses"], marker="aggregation-uses"),
                _table(columns, rows, marker="aggregation", empty="No labels to aggregate yet."),
            ),
        ),
        Section(
            "Each annotator's estimated competence",
            (
                Paragraph("By pseudonym; each method's number is its own scale:", muted=True),
                what,
                _table(
                    ["Stage", "Question", "Annotator", *(m["title"] for m in methods)],
                    competence,
                    marker="aggregation-competence",
                    empty="No labels to aggregate yet.",
                ),
            ),
            level=3,
        ),
    ]


def _versus(result: dict, name: str) -> str:
    """An aggregate's agreement with a reference, with its n; "—" when no item has both."""
    if not result["n_items"]:
        return "—"
    return f"{fmt(result[name])} (n = {result['n_items']})"


def _conflicts(report: dict) -> Section:
    conflicts = report["conflicts"]
    blocks: list[Table | Paragraph] = [Paragraph(conflicts["summary"], marker="conflicts")]
    if conflicts["rows"]:
        columns = ["Item", "Earlier stage", "Value", "Later stage", "Value", "Disposition", "Note"]
        rows = [
            _row(
                [
                    c["item"],
                    c["earlier_stage"],
                    c["earlier_value"],
                    c["later_stage"],
                    c["later_value"],
                    c["disposition"],
                    c["note"],
                ]
            )
            for c in conflicts["rows"]
        ]
        blocks.append(_table(columns, rows))
    return Section("Cross-stage conflicts", tuple(blocks))


def _distribution(report: dict) -> Section:
    rows = [
        _row([s["name"], d["question"], v["label"], v["count"], fmt(v["share"], 3)])
        for s in report["stages"]
        for d in s["distribution"]
        for v in d["values"]
    ]
    return Section(
        "Label distribution after adjudication", (_table(["Stage", "Question", "Value", "Count", "Share"], rows),)
    )


def _volume(report: dict) -> Section:
    columns = [
        "Stage",
        "Labels",
        "Pilot",
        "Qualification",
        "Main",
        "Post-discussion",
        "Revised",
        "Items labelled",
        "Annotators",
    ]
    rows = [
        _row(
            [
                s["name"],
                f"{s['volume']['labels']:,}",
                s["volume"]["by_phase"]["pilot"],
                s["volume"]["by_phase"]["qualification"],
                s["volume"]["by_phase"]["main"],
                s["volume"]["post_discussion"],
                f"{s['volume']['revised_labels']} ({_plural(s['volume']['revisions'], 'earlier version')} kept)",
                s["volume"]["items_labelled"],
                s["volume"]["annotators"],
            ]
        )
        for s in report["stages"]
    ]
    return Section("Volume", (_table(columns, rows),))


def _hours_and_spend(report: dict) -> Section:
    columns = ["Stage", "Hours", "Median min / item", "Rate / h", "Spend", "Final labels", "Cost per final label"]
    rows = [
        _row(
            [
                s["name"],
                fmt(s["time_and_cost"]["hours"], 2),
                ", ".join(f"{k}: {fmt(v, 2)}" for k, v in s["time_and_cost"]["median_minutes_per_item"].items()) or "—",
                f"{s['time_and_cost']['pay_rate_per_hour']} {s['time_and_cost']['currency']}",
                s["time_and_cost"]["spend"],
                s["time_and_cost"]["final_labels"],
                money(s["time_and_cost"]["cost_per_final_label"]),
            ]
        )
        for s in report["stages"]
    ]
    totals = report["totals"]
    rows.append(
        _row(
            [
                "Total",
                fmt(totals["hours"], 2),
                "",
                "",
                totals["spend"],
                totals["final_labels"],
                money(totals["cost_per_final_label"]),
            ],
            total=True,
        )
    )
    return Section("Hours and spend", (_table(columns, rows),))


def report_sections(report: dict) -> list[Section]:
    """The report's sections in reading order, every number rounded for display."""
    return [
        *_workforce(report),
        _gate(report),
        _adjudication(report),
        *_agreement(report),
        *_aggregation(report),
        _conflicts(report),
        _distribution(report),
        _volume(report),
        _hours_and_spend(report),
        Section("Conventions", (BulletList(tuple((Span(c),) for c in report["conventions"])),)),
    ]


# --- Markdown ----------------------------------------------------------------------------------------


def _markdown_table(table: Table) -> list[str]:
    def cell(value: str) -> str:
        return value.replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(cell(c) for c in table.columns) + " |", "|" + "---|" * len(table.columns)]
    lines += ["| " + " | ".join(cell(c.text) for c in row.cells) + " |" for row in table.rows]
    lines.append("")
    if not table.rows and table.empty:
        lines += [table.empty, ""]
    return lines


def _markdown_block(block: Table | Paragraph | BulletList) -> list[str]:
    if isinstance(block, Table):
        return _markdown_table(block)
    if isinstance(block, Paragraph):
        return [block.text, ""]
    return ["- " + "".join(span.text for span in item) for item in block.items] + [""]


def sections_markdown(sections: Sequence[Section]) -> list[str]:
    """The sections as Markdown lines (a heading per section, then its blocks)."""
    out: list[str] = []
    for section in sections:
        out += ["#" * section.level + " " + section.title, ""]
        for block in section.blocks:
            out += _markdown_block(block)
    return out
