"""Heatmaps of the judge-corrected table: the corrected difference beside the judge-only one, per tutor and domain.

One row per contrast and, per metric, the corrected difference B − A beside the judge-only one, coloured by
the one rule of `audits.effect_tone` (grey where the CI spans 0, red or blue by sign), outlined where the corrected
interval excludes 0 (corrected column) or the judge-only analysis flags the cell (judge-only column).

Pure (no Django): cells come from `audits.judge_corrected_table`, the SVG from `audits.svg_heatmap`; `link` builds
each cell's address (the contrast's pairs page on the results pages, nothing in the report).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from audits.effect_tone import COLOUR_CEILING, effect_tone
from audits.heatmap_figures import Figure, format_number
from audits.judge_corrected_table import CorrectedCell
from audits.svg_heatmap import HeatCell, heatmap_svg

CORRECTED, JUDGE_ONLY = "corrected", "judge only"


def _contrast_label(cell: CorrectedCell) -> str:
    return f"{cell.dimension}: {cell.level_a} → {cell.level_b}"


def _hover(cell: CorrectedCell, which: str) -> str:
    result = cell.result
    interval = result.corrected if which == CORRECTED else result.judge_only
    level = f"{100 * (1 - result.alpha):g}%"
    parts = [
        f"{_contrast_label(cell)} · {cell.metric} · {which}",
        f"B − A = {format_number(interval.estimate)}",
        f"{level} CI [{format_number(interval.ci_low)}, {format_number(interval.ci_high)}]",
        f"labelled turns A / B = {result.side_a.n_labelled} / {result.side_b.n_labelled}",
        f"turns A / B = {result.side_a.n_turns} / {result.side_b.n_turns}",
    ]
    if which == JUDGE_ONLY and cell.judge_only_flag:
        parts.append("flagged by the judge-only analysis")
    if cell.badge:
        parts.append(cell.badge.upper())
    if cell.cue.cue_sensitive:
        parts.append("judge cue-sensitive")
    return " · ".join(parts)


def _heat_cell(cell: CorrectedCell, which: str, href: str) -> HeatCell:
    interval = cell.result.corrected if which == CORRECTED else cell.result.judge_only
    marked = interval.excludes_zero if which == CORRECTED else cell.judge_only_flag
    return HeatCell(
        value=interval.estimate,
        tone=effect_tone(interval.estimate, interval.ci_low, interval.ci_high),
        text=f"{interval.estimate:+.2f}",
        title=_hover(cell, which),
        href=href,
        violation=marked,
        data={
            "tutor": str(cell.tutor_id),
            "domain": cell.domain,
            "family": cell.family,
            "dimension": cell.dimension,
            "level-a": cell.level_a,
            "level-b": cell.level_b,
            "metric": cell.metric,
            "which": which,
            "disagreement": cell.disagreement or "",
        },
    )


def judge_corrected_figures(
    cells: Sequence[CorrectedCell], link: Callable[[CorrectedCell], str] | None = None
) -> list[Figure]:
    """One heatmap per (tutor, domain) that has corrected cells, in the cells' reading order."""
    link = link or (lambda cell: "")
    groups: dict[tuple[int, str], list[CorrectedCell]] = {}
    for cell in sorted(cells, key=lambda c: (c.tutor_id, c.domain)):
        groups.setdefault((cell.tutor_id, cell.domain), []).append(cell)
    figures = []
    for (tutor_id, domain), group in groups.items():
        ordered = sorted(group, key=lambda c: (c.kind, c.family, c.dimension, c.level_a, c.level_b))
        rows = list(dict.fromkeys(f"{c.kind} · {_contrast_label(c)}" for c in ordered))
        metrics = list(dict.fromkeys(c.metric for c in sorted(group, key=lambda c: c.metric)))
        columns = [f"{metric} · {which}" for metric in metrics for which in (CORRECTED, JUDGE_ONLY)]
        heat: dict[tuple[str, str], HeatCell] = {}
        for cell in ordered:
            row = f"{cell.kind} · {_contrast_label(cell)}"
            for which in (CORRECTED, JUDGE_ONLY):
                heat[(row, f"{cell.metric} · {which}")] = _heat_cell(cell, which, link(cell))
        title = f"{group[0].tutor} · {domain}"
        svg = heatmap_svg(
            rows=rows,
            columns=columns,
            cells=heat,
            caption=f"Judge-corrected and judge-only differences B − A: {title}",
            css_class="heatmap judge-corrected",
        )
        figures.append(
            Figure(
                key=f"judge-corrected-{tutor_id}-{domain}",
                title=title,
                note=f"B − A in the metric's units; red above 0, blue below, darkest at |B − A| ≥ {COLOUR_CEILING:g}, "
                "grey where its interval spans 0; outlined: the corrected interval excludes 0 (corrected) or the "
                "judge-only analysis flags the cell (judge only).",
                svg=svg,
            )
        )
    return figures
