"""A dot-and-whisker plot of changes with their CIs, as inline SVG (the compare page, each finding's figure).

Pure: no Django. One row per change: its label, a dot at the change and a whisker over its CI, on one
shared axis with a line at zero, coloured by the one rule of `audits.effect_tone`: a whisker wholly above zero (the
gap grew) in red, wholly below (it shrank) in blue, across zero in grey; a change without a CI is a dot alone.
A plot may fix its axis (``span``) and draw reference lines (``marks``, e.g. a threshold on each side of zero).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

from audits.effect_tone import INK, NEGATIVE, POSITIVE, SPANS_ZERO, effect_tone

RED, BLUE, GREY = INK[POSITIVE], INK[NEGATIVE], INK[SPANS_ZERO]
ROW_HEIGHT = 22
PLOT_WIDTH = 420


@dataclass(frozen=True)
class PlotRow:
    label: str
    change: float
    low: float = math.nan
    high: float = math.nan


def _colour(row: PlotRow) -> str:
    return INK[effect_tone(row.change, row.low, row.high)]


def change_plot_svg(
    rows: Sequence[PlotRow],
    caption: str,
    *,
    span: tuple[float, float] | None = None,
    marks: Sequence[float] = (),
    plot_width: int = PLOT_WIDTH,
    css_class: str = "change-plot",
) -> str:
    """The plot as one <svg>, every text escaped; an empty string when no row has a finite change. ``span`` fixes
    the axis (its ends are the outer ticks), ``marks`` are dashed reference lines (class "mark")."""
    shown = [row for row in rows if math.isfinite(row.change)]
    if not shown:
        return ""
    if span is None:
        values = [v for row in shown for v in (row.change, row.low, row.high) if math.isfinite(v)]
        lo, hi = min(values + [-0.05]), max(values + [0.05])
        pad = (hi - lo) * 0.05
        lo, hi = lo - pad, hi + pad
    else:
        (lo, hi), pad = span, 0.0
    label_width = max(len(row.label) for row in shown) * 7 + 16
    width, height = label_width + plot_width + 20, ROW_HEIGHT * len(shown) + 34

    def x(value: float) -> float:
        return label_width + (value - lo) / (hi - lo) * plot_width

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="{escape(css_class)}" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{escape(caption)}"><title>{escape(caption)}</title>',
        f'<line x1="{x(0):.1f}" y1="4" x2="{x(0):.1f}" y2="{height - 26}" stroke="#9aa3b5" stroke-dasharray="3 3"/>',
        *(
            f'<line class="mark" x1="{x(mark):.1f}" y1="4" x2="{x(mark):.1f}" y2="{height - 26}" stroke="#1d2330" '
            'stroke-dasharray="1 2"/>'
            for mark in marks
            if lo <= mark <= hi
        ),
    ]
    for i, row in enumerate(shown):
        y = 12 + i * ROW_HEIGHT
        colour = _colour(row)
        ci = f"[{row.low:.3f}, {row.high:.3f}]" if math.isfinite(row.low) and math.isfinite(row.high) else "no CI"
        parts.append(
            f'<g class="change-row"><title>{escape(row.label)}: {row.change:+.3f} {ci}</title>'
            f'<text x="{label_width - 8}" y="{y + 4}" text-anchor="end" font-size="12" fill="#1d2330">'
            f"{escape(row.label)}</text>"
        )
        if math.isfinite(row.low) and math.isfinite(row.high):
            parts.append(
                f'<line class="whisker" x1="{x(row.low):.1f}" y1="{y}" x2="{x(row.high):.1f}" y2="{y}" '
                f'stroke="{colour}" stroke-width="2"/>'
            )
        parts.append(f'<circle class="dot" cx="{x(row.change):.1f}" cy="{y}" r="4" fill="{colour}"/></g>')
    axis_y = height - 12
    for value in (lo + pad, 0.0, hi - pad):
        parts.append(
            f'<text x="{x(value):.1f}" y="{axis_y}" text-anchor="middle" font-size="11" fill="#5b6475">'
            f"{value:+.2f}</text>"
        )
    parts.append("</svg>")
    return "".join(parts)
