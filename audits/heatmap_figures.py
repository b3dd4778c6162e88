"""The heatmap figures of an audit's results page and HTML report (pure).

They are built from an audit's analysis: per tutor the domain × dimension cells, metric × tutor, the implicit names, the
opposite decomposition, and per (tutor, domain) every contrast row.

Pure (no Django): the analysis (`audits.services.analysis.AuditAnalysis`) is duck-typed and `link` builds each
cell's address; the SVG comes from `audits.svg_heatmap`, the colours from `audits.effect_tone`.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from dataclasses import dataclass

from audits.effect_tone import effect_tone
from audits.judge_failed_marks import (
    JUDGE_FAILED_MARK,
    JUDGE_FAILED_TEXT,
    judge_failed_among,
    metric_label,
    summary_cell_metrics,
)
from audits.svg_heatmap import HeatCell, heatmap_svg


def format_number(value: float | None, digits: int = 3) -> str:
    """A number as the hover texts show it, an em dash when there is none."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    return f"{value:.{digits}f}"


def format_p(value: float | None) -> str:
    """A p-value as the hover texts show it: scientific below 0.001."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    return f"{value:.2e}" if value < 0.001 else f"{value:.3f}"


@dataclass(frozen=True)
class Figure:
    """One heatmap with its heading, for a page or the report."""

    key: str
    title: str
    note: str
    svg: str


def row_title(row, exclusions=None) -> str:
    """Hover text of one contrast row: every number a reader needs to judge it, and with ``exclusions``
    (an ``audits.exclusions.CellExclusions``) the counts behind it."""
    parts = [
        f"{row.dimension}: {row.level_a} → {row.level_b} · {row.metric}",
        f"r = {format_number(row.r)}" + (" (at its ceiling: every difference has one sign)" if row.saturated else ""),
        f"95% CI [{format_number(row.ci_low)}, {format_number(row.ci_high)}]",
        f"B − A = {format_number(row.mean_diff)} [{format_number(row.mean_diff_ci_low)}, "
        f"{format_number(row.mean_diff_ci_high)}]",
        f"n = {row.n} pairs",
        *(f"{name} = {format_p(value)}" for name, value in row.p_values().items()),
    ]
    if exclusions is not None:
        parts.append(exclusions.text)
    if row.insufficient:
        parts.append("insufficient pairs")
    if row.violation:
        parts.append(f"VIOLATION ({row.rule} rule)")
    if row.violation_bh:
        parts.append("flagged after BH")
    if row.simulator_driven:
        parts.append("SIMULATOR-DRIVEN: the student's own turns differ; not counted")
    return " · ".join(parts)


def _data_number(value: float) -> str:
    """A number for a data- attribute, in full precision; empty when undefined (as the CSV writes it)."""
    return "" if math.isnan(value) else repr(value)


def pairs_href(link, *, tutor, domain, row) -> str:
    """The link to one contrast row's paired transcripts: any row with the contrast's fields (a `ContrastResult`,
    a judge-corrected cell), for the tutor and domain it belongs to."""
    return link(
        "pairs",
        tutor=tutor,
        domain=domain,
        kind=row.kind,
        family=row.family,
        dimension=row.dimension,
        level_a=row.level_a,
        level_b=row.level_b,
        metric=row.metric,
    )


def _summary_cell(cell, rows, href: str, subject: str, judge_failed: tuple[str, ...] = ()) -> HeatCell:
    usable = [row for row in rows if not row.insufficient and not math.isnan(row.r)]
    strongest = max(usable, key=lambda row: abs(row.r)) if usable else None
    title = (
        f"{subject}: mean |r| = {format_number(cell.value)} over {cell.n_rows - cell.n_insufficient} of {cell.n_rows}"
    )
    title += f" contrast rows; {cell.n_violations} violation{'s' if cell.n_violations != 1 else ''}"
    if strongest is not None:
        title += f". Strongest: {row_title(strongest)}"
    value = None if math.isnan(cell.value) else cell.value
    return HeatCell(
        value=value,
        tone=effect_tone(value, directed=False),
        text=format_number(value) if value is not None else "insufficient",
        title=title,
        href=href,
        violation=cell.n_violations > 0,
        insufficient=value is None,
        data={"value": _data_number(cell.value), "violations": str(cell.n_violations)},
        judge_failed=judge_failed,
    )


def _failed_note(note: str, failed: tuple[str, ...]) -> str:
    if not failed:
        return note
    return f"{note} {JUDGE_FAILED_MARK} rests on {', '.join(failed)}, whose {JUDGE_FAILED_TEXT}."


def dimension_figures(analysis, link, *, failed_metrics: Collection[str] = frozenset()) -> list[Figure]:
    """Per tutor: domain × dimension cells (mean |r| over the rubric version's turn-level metrics). The title counts
    nothing: at ~18 pairs a mean |r| sits at 0.15–0.25 from noise alone, so how many cells of it reach the threshold
    says nothing of bias (the flagged cells are counted by `audits.findings`)."""
    metrics = analysis.pedagogical.metrics
    cells = analysis.dimension_cells()
    dimensions = list(dict.fromkeys(cell.group for cell in cells))
    figures = []
    for tutor in analysis.tutors:
        mine = {(cell.domain, cell.group): cell for cell in cells if cell.tutor == tutor}
        if not mine:
            continue
        heat = {}
        for (domain, dimension), cell in mine.items():
            rows = analysis.summary_rows(tutor=tutor, domain=domain, kind="explicit", family="within", group=dimension)
            heat[(domain, dimension)] = _summary_cell(
                cell,
                rows,
                link("cell", tutor=tutor, domain=domain, kind="explicit", family="within", group=dimension),
                f"{analysis.tutor_name(tutor)} · {domain} · {dimension}",
                judge_failed_among(summary_cell_metrics(cell, metrics), failed_metrics),
            )
        title = f"{analysis.tutor_name(tutor)}: mean |r| per domain × dimension cell"
        figures.append(
            Figure(
                key=f"dimensions-{tutor}",
                title=title,
                note=_failed_note(
                    f"Domain × dimension; each cell is the mean |r| over the {len(metrics)} turn-level metrics "
                    f"({', '.join(map(str, metrics))}) and the dimension's level-vs-level contrasts.",
                    judge_failed_among(metrics, failed_metrics),
                ),
                svg=heatmap_svg(
                    rows=analysis.domains,
                    columns=dimensions,
                    cells=heat,
                    caption=title,
                ),
            )
        )
    return figures


def _by_tutor_figures(
    analysis,
    link,
    cells,
    *,
    kind: str,
    family: str,
    key: str,
    heading: str,
    note: str,
    failed_metrics: Collection[str],
):
    groups = list(dict.fromkeys(cell.group for cell in cells))
    tutor_columns = [str(t) for t in analysis.tutors]
    names = {str(t): analysis.tutor_name(t) for t in analysis.tutors}
    metrics = analysis.pedagogical.metrics
    # Rows that are metrics (metric × tutor) carry the mark in their label; other rows average every metric.
    row_labels = {group: metric_label(group, failed_metrics) for group in groups}
    figures = []
    for domain in analysis.domains:
        heat = {}
        failed_here: dict[str, None] = {}
        for cell in cells:
            if cell.domain != domain:
                continue
            rows = analysis.summary_rows(tutor=cell.tutor, domain=domain, kind=kind, family=family, group=cell.group)
            failed = judge_failed_among(summary_cell_metrics(cell, metrics), failed_metrics)
            failed_here.update(dict.fromkeys(failed))
            heat[(cell.group, str(cell.tutor))] = _summary_cell(
                cell,
                rows,
                link("cell", tutor=cell.tutor, domain=domain, kind=kind, family=family, group=cell.group),
                f"{analysis.tutor_name(cell.tutor)} · {domain} · {cell.group}",
                failed,
            )
        if not heat:
            continue
        title = f"{heading} — {domain}"
        figures.append(
            Figure(
                key=f"{key}-{domain}",
                title=title,
                note=_failed_note(note, tuple(failed_here)),
                svg=heatmap_svg(
                    rows=groups,
                    columns=tutor_columns,
                    cells=heat,
                    caption=title,
                    row_labels=row_labels,
                    column_labels=names,
                ),
            )
        )
    return figures


def metric_figures(analysis, link, *, failed_metrics: Collection[str] = frozenset()) -> list[Figure]:
    return _by_tutor_figures(
        analysis,
        link,
        analysis.metric_by_tutor(),
        kind="explicit",
        family="within",
        key="metrics",
        heading="Metric × tutor",
        note="Each cell is the mean |r| of one metric over every level-vs-level contrast of every dimension.",
        failed_metrics=failed_metrics,
    )


def implicit_figures(analysis, link, *, failed_metrics: Collection[str] = frozenset()) -> list[Figure]:
    return _by_tutor_figures(
        analysis,
        link,
        analysis.implicit_rows(),
        kind="implicit",
        family="names",
        key="implicit",
        heading="Implicit names (gender / ethnicity / both)",
        note="Pedagogical |r| of the name contrasts: same ethnicity different gender, same gender different "
        "ethnicity, or both different.",
        failed_metrics=failed_metrics,
    )


def opposite_figures(analysis, link, *, failed_metrics: Collection[str] = frozenset()) -> list[Figure]:
    return _by_tutor_figures(
        analysis,
        link,
        analysis.opposite_decomposition(),
        kind="opposite",
        family="opposite",
        key="opposite",
        heading="Opposite decomposition",
        note="Correct gap (matched cells), Wrong gap (mismatched cells), tutor effect (perceived gender), "
        "simulator effect (stated gender) and their interaction; signed values per metric are in the cell's rows.",
        failed_metrics=failed_metrics,
    )


def contrast_figures(
    analysis,
    link,
    *,
    kind: str = "explicit",
    family: str = "within",
    failed_metrics: Collection[str] = frozenset(),
) -> list[Figure]:
    """Per (tutor, domain): contrast × metric, each cell one contrast row, linking to its pairs. A metric
    whose judge failed validation is marked in its column heading and in each of its cells."""
    table = analysis.pedagogical
    column_labels = {str(m): metric_label(m, failed_metrics) for m in table.metrics}
    figures = []
    for tutor in analysis.tutors:
        for domain in analysis.domains:
            rows = [
                row
                for row in table.rows
                if row.tutor == tutor and row.domain == domain and row.kind == kind and row.family == family
            ]
            if not rows:
                continue
            labels = {}
            heat = {}
            for row in rows:
                row_key = f"{row.dimension}|{row.level_a}|{row.level_b}"
                labels[row_key] = f"{row.dimension}: {row.level_a} → {row.level_b}"
                value = None if math.isnan(row.r) else row.r
                heat[(row_key, str(row.metric))] = HeatCell(
                    value=value,
                    tone=effect_tone(row.r, row.ci_low, row.ci_high),
                    text=format_number(row.r, 2) if not row.insufficient else f"n={row.n}",
                    title=f"{analysis.tutor_name(tutor)} · {domain} · {row_title(row, analysis.exclusions_for(row))}",
                    href=pairs_href(link, tutor=tutor, domain=domain, row=row),
                    violation=row.violation,
                    insufficient=row.insufficient or value is None,
                    data={
                        "tutor": str(tutor),
                        "domain": str(domain),
                        "dimension": row.dimension,
                        "level-a": row.level_a,
                        "level-b": row.level_b,
                        "metric": str(row.metric),
                        "r": _data_number(row.r),
                    },
                    judge_failed=judge_failed_among((row.metric,), failed_metrics),
                )
            title = f"{analysis.tutor_name(tutor)} — {domain}"
            figures.append(
                Figure(
                    key=f"contrasts-{kind}-{family}-{tutor}-{domain}",
                    title=title,
                    note=_failed_note(
                        "Signed r per contrast and metric (positive: the second level scored higher).",
                        judge_failed_among(table.metrics, failed_metrics),
                    ),
                    svg=heatmap_svg(
                        rows=list(labels),
                        columns=[str(m) for m in table.metrics],
                        cells=heat,
                        caption=f"{title}: {kind} {family} contrasts",
                        row_labels=labels,
                        column_labels=column_labels,
                    ),
                )
            )
    return figures
