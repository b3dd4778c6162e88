"""Server-rendered SVG heatmaps of fairness tables: colour by |r|, a mark on violations, insufficient
cells greyed, a "†" on numbers that rest on a metric whose judge failed validation, a hover <title> with
the numbers, and each cell a link.

Pure (no Django): the results pages, the self-contained HTML report and the tests call `heatmap_svg`
with plain `HeatCell`s and get a string of SVG markup with every text escaped.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Collection, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from html import escape

from audits.fairness import TURN_METRICS

# |r| at which the colour is darkest; the paper's effects are mostly below 0.3.
COLOUR_CEILING = 0.5
INSUFFICIENT_FILL = "#d5d9e0"
MISSING_FILL = "#f4f5f7"
VIOLATION_STROKE = "#111827"
# The mark on a metric whose judge failed validation (its labels, and every number resting on it): one
# character, the same on the pages, in the HTML report and in the SVG, explained by a legend line.
JUDGE_FAILED_MARK = "†"
JUDGE_FAILED_TEXT = "judge failed validation"


@dataclass(frozen=True)
class HeatCell:
    """One cell. ``value`` is the |r| that sets the colour (NaN/None: no usable value)."""

    value: float | None
    text: str  # shown in the cell
    title: str  # hover text: r, CI, n, p, adjusted p
    href: str = ""
    violation: bool = False
    insufficient: bool = False
    data: Mapping[str, str] = field(default_factory=dict)  # data-* attributes (tests, scripts)
    judge_failed: tuple[str, ...] = ()  # metrics the value rests on whose judge failed validation


def colour_for(value: float | None) -> str:
    """White (|r| = 0) to deep red (|r| >= COLOUR_CEILING), linear in |r|."""
    if value is None or math.isnan(value):
        return MISSING_FILL
    share = min(1.0, abs(value) / COLOUR_CEILING)
    start, end = (255, 255, 255), (179, 24, 24)
    red, green, blue = (round(a + (b - a) * share) for a, b in zip(start, end, strict=True))
    return f"#{red:02x}{green:02x}{blue:02x}"


def _text_colour(value: float | None) -> str:
    return "#ffffff" if value is not None and not math.isnan(value) and abs(value) / COLOUR_CEILING > 0.6 else "#1d2330"


def _attr(value: object) -> str:
    return escape(str(value), quote=True)


def heatmap_svg(
    *,
    rows: Sequence[str],
    columns: Sequence[str],
    cells: Mapping[tuple[str, str], HeatCell],
    caption: str,
    row_labels: Mapping[str, str] | None = None,
    column_labels: Mapping[str, str] | None = None,
    css_class: str = "heatmap",
) -> str:
    """An SVG grid: rows × columns, each (row, column) drawn from ``cells`` (absent = empty square)."""
    row_labels = row_labels or {}
    column_labels = column_labels or {}
    row_text = [row_labels.get(row, row) for row in rows]
    column_text = [column_labels.get(column, column) for column in columns]
    label_width = max([len(text) for text in row_text] + [4]) * 7 + 16
    cell_width = min(170, max(72, max([len(text) for text in column_text] + [4]) * 7 + 12))
    cell_height = 30
    # Column labels wrap to the column's width (at most HEADER_LINES lines; the full label as a tooltip).
    header_lines = [_wrap_label(text, max(4, (cell_width - 8) // 7)) for text in column_text]
    header_height = 14 * max([len(lines) for lines in header_lines] + [1]) + 14
    width = label_width + cell_width * len(columns) + 2
    height = header_height + cell_height * len(rows) + 2
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="{_attr(css_class)}" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{_attr(caption)}">',
        f"<title>{escape(caption)}</title>",
    ]
    for j, (text, lines) in enumerate(zip(column_text, header_lines, strict=True)):
        x = label_width + j * cell_width + cell_width / 2
        first_y = header_height - 9 - 14 * (len(lines) - 1)
        if len(lines) == 1:
            body = escape(text)
            position = f'x="{x:.1f}" y="{first_y}" '
        else:
            body = "".join(
                f'<tspan x="{x:.1f}" y="{first_y + 14 * n}">{escape(line)}</tspan>' for n, line in enumerate(lines)
            )
            position = ""
        parts.append(
            f'<text {position}text-anchor="middle" font-size="12" fill="#1d2330"><title>{escape(text)}</title>'
            f"{body}</text>"
        )
    for i, (row, text) in enumerate(zip(rows, row_text, strict=True)):
        y = header_height + i * cell_height
        parts.append(
            f'<text x="{label_width - 8}" y="{y + cell_height / 2 + 4:.1f}" text-anchor="end" font-size="12" '
            f'fill="#1d2330">{escape(text)}</text>'
        )
        for j, column in enumerate(columns):
            x = label_width + j * cell_width
            cell = cells.get((row, column))
            parts.append(_cell_svg(cell, x, y, cell_width, cell_height))
    parts.append("</svg>")
    return "".join(parts)


HEADER_LINES = 3


def _wrap_label(text: str, width: int) -> list[str]:
    """A column label in lines of at most `width` characters, at most HEADER_LINES of them (the last one
    ending in … when the label is longer)."""
    lines = textwrap.wrap(text, width=width, break_long_words=True) or [""]
    if len(lines) > HEADER_LINES:
        lines = lines[:HEADER_LINES]
        lines[-1] = lines[-1][: max(1, width - 1)].rstrip() + "…"
    return lines


def _cell_svg(cell: HeatCell | None, x: float, y: float, width: float, height: float) -> str:
    if cell is None:
        return (
            f'<rect x="{x + 1}" y="{y + 1}" width="{width - 2}" height="{height - 2}" fill="{MISSING_FILL}" '
            f'stroke="#e3e6eb"/>'
        )
    classes = ["cell"]
    if cell.violation:
        classes.append("violation")
    if cell.insufficient:
        classes.append("insufficient")
    text, hover, data = cell.text, cell.title, dict(cell.data)
    if cell.judge_failed:
        classes.append("judge-failed")
        text = f"{text} {JUDGE_FAILED_MARK}"
        hover = f"{hover} · {JUDGE_FAILED_MARK} {JUDGE_FAILED_TEXT}: {', '.join(cell.judge_failed)}"
        data["judge-failed"] = " ".join(cell.judge_failed)
    fill = INSUFFICIENT_FILL if cell.insufficient else colour_for(cell.value)
    text_fill = "#5b6475" if cell.insufficient else _text_colour(cell.value)
    stroke = f'stroke="{VIOLATION_STROKE}" stroke-width="3"' if cell.violation else 'stroke="#ffffff" stroke-width="1"'
    data_attributes = "".join(f' data-{_attr(key)}="{_attr(value)}"' for key, value in data.items())
    inner = [
        f'<rect x="{x + 1.5}" y="{y + 1.5}" width="{width - 3}" height="{height - 3}" rx="3" fill="{fill}" {stroke}/>',
        f'<text x="{x + width / 2:.1f}" y="{y + height / 2 + 4:.1f}" text-anchor="middle" font-size="12" '
        f'fill="{text_fill}">{escape(text)}</text>',
    ]
    if cell.violation:
        # A filled dot in the corner, so a violation is visible without colour vision.
        inner.append(f'<circle cx="{x + width - 8}" cy="{y + 8}" r="4" fill="{VIOLATION_STROKE}"/>')
    title = f"<title>{escape(hover)}</title>"
    body = title + "".join(inner)
    label = f' aria-label="{_attr(hover)}"'
    if cell.href:
        return f'<a href="{_attr(cell.href)}" class="{" ".join(classes)}"{label}{data_attributes}>{body}</a>'
    return f'<g class="{" ".join(classes)}"{label}{data_attributes}>{body}</g>'


def judge_failed_among(metrics: Sequence[Hashable], failed: Collection[str]) -> tuple[str, ...]:
    """Those of ``metrics`` whose judge failed validation, in the given order."""
    return tuple(str(metric) for metric in metrics if str(metric) in failed)


def summary_cell_metrics(cell, metrics: Sequence[Hashable] = TURN_METRICS) -> tuple[Hashable, ...]:
    """The metrics a summary cell's value rests on (a `SummaryCell` or `BackboneChange`): its own metric
    for a metric × tutor cell, else every turn-level metric of ``metrics`` — pedagogical |r| averages them.
    The same rule `AuditAnalysis.summary_rows` uses to find a cell's rows."""
    if cell.kind == "explicit" and cell.group in TURN_METRICS:
        return (cell.group,)
    return tuple(metric for metric in metrics if metric in TURN_METRICS)


def metric_label(metric: Hashable, failed: Collection[str]) -> str:
    """A metric's name as a heading, with the mark when its judge failed validation."""
    return f"{metric} {JUDGE_FAILED_MARK}" if str(metric) in failed else str(metric)


def format_number(value: float | None, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    return f"{value:.{digits}f}"


def format_p(value: float | None) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    return f"{value:.2e}" if value < 0.001 else f"{value:.3f}"


# --------------------------------------------------------------------------------------------------
# The results page's figures, from an analysis (audits.services.analysis.AuditAnalysis, duck-typed)
# --------------------------------------------------------------------------------------------------


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
        f"p = {format_p(row.p_test)}{' (exact)' if row.p_method == 'exact' else ''}",
        f"adjusted p (BH) = {format_p(row.p_adjusted)}",
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
        text=format_number(value) if value is not None else "insufficient",
        title=title,
        href=href,
        violation=cell.n_violations > 0,
        insufficient=value is None,
        data={"value": repr(cell.value), "violations": str(cell.n_violations)},
        judge_failed=judge_failed,
    )


def _failed_note(note: str, failed: tuple[str, ...]) -> str:
    if not failed:
        return note
    return f"{note} {JUDGE_FAILED_MARK} rests on {', '.join(failed)}, whose {JUDGE_FAILED_TEXT}."


def dimension_figures(analysis, link, *, failed_metrics: Collection[str] = frozenset()) -> list[Figure]:
    """Per tutor: domain × dimension cells (mean |r| over the five turn-level metrics), "k of 12"."""
    counts = {count.tutor: count for count in analysis.threshold_counts()}
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
        count = counts.get(tutor)
        threshold = analysis.parameters.threshold
        title = f"{analysis.tutor_name(tutor)}: {count.label if count else '0 of 0'} cells at |r| ≥ {threshold:g}"
        figures.append(
            Figure(
                key=f"dimensions-{tutor}",
                title=title,
                note=_failed_note(
                    "Domain × dimension; each cell is the mean |r| over the five turn-level metrics and the "
                    "dimension's level-vs-level contrasts.",
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
                value = None if math.isnan(row.r) else abs(row.r)
                heat[(row_key, str(row.metric))] = HeatCell(
                    value=value,
                    text=format_number(row.r, 2) if not row.insufficient else f"n={row.n}",
                    title=f"{analysis.tutor_name(tutor)} · {domain} · {row_title(row, analysis.exclusions_for(row))}",
                    href=link(
                        "pairs",
                        tutor=tutor,
                        domain=domain,
                        kind=row.kind,
                        family=row.family,
                        dimension=row.dimension,
                        level_a=row.level_a,
                        level_b=row.level_b,
                        metric=row.metric,
                    ),
                    violation=row.violation,
                    insufficient=row.insufficient or value is None,
                    data={
                        "tutor": str(tutor),
                        "domain": str(domain),
                        "dimension": row.dimension,
                        "level-a": row.level_a,
                        "level-b": row.level_b,
                        "metric": str(row.metric),
                        "r": repr(row.r),
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
