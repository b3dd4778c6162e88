"""Server-rendered SVG heatmaps, pure: one coloured cell per number, each a link, every text escaped.

Each heatmap colours by the one rule of `audits.effect_tone` (grey where the CI spans 0, red or blue by sign,
deeper with the size), puts a mark on violations, greys insufficient cells, puts a "†" on numbers that rest on a
metric whose judge failed validation, gives a hover <title> with the numbers, and makes each cell a link.

Pure (no Django): the results pages' figures (`audits.heatmap_figures`), the self-contained HTML report and
the tests call `heatmap_svg` with plain `HeatCell`s and get a string of SVG markup with every text escaped.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from html import escape

from audits.effect_tone import UNDEFINED, UNDEFINED_FILL, tone_fill, tone_text_fill
from audits.judge_failed_marks import JUDGE_FAILED_MARK, JUDGE_FAILED_TEXT

INSUFFICIENT_FILL = "#d5d9e0"
MISSING_FILL = UNDEFINED_FILL
VIOLATION_STROKE = "#111827"


@dataclass(frozen=True)
class HeatCell:
    """One cell. ``value``'s size sets the colour's depth (NaN/None: no usable value); ``tone`` (an
    `audits.effect_tone` tone: its CI and sign) sets the hue."""

    value: float | None
    text: str  # shown in the cell
    title: str  # hover text: r, CI, n, p, adjusted p
    href: str = ""
    violation: bool = False
    insufficient: bool = False
    data: Mapping[str, str] = field(default_factory=dict)  # data-* attributes (tests, scripts)
    judge_failed: tuple[str, ...] = ()  # metrics the value rests on whose judge failed validation
    tone: str = UNDEFINED


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
    # A grid of links is a group a screen reader can enter; an image's children would be hidden from it.
    role = "group" if any(cell.href for cell in cells.values()) else "img"
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="{_attr(css_class)}" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="{role}" aria-label="{_attr(caption)}">',
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
    if not cell.insufficient:
        classes.append(cell.tone)
    fill = INSUFFICIENT_FILL if cell.insufficient else tone_fill(cell.tone, cell.value)
    text_fill = "#5b6475" if cell.insufficient else tone_text_fill(cell.tone, cell.value)
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
    # The spoken name holds the visible text, so a voice-control user can say what they see.
    label = f' aria-label="{_attr(hover if text in hover else f"{text} · {hover}")}"'
    if cell.href:
        return f'<a href="{_attr(cell.href)}" class="{" ".join(classes)}"{label}{data_attributes}>{body}</a>'
    return f'<g class="{" ".join(classes)}"{label}{data_attributes}>{body}</g>'
