"""One finding's figure: its r as a dot with a whisker over its CI, on the whole r axis with the threshold marked.

Pure (no Django). A finding (`audits.findings`: a flagged contrast cell) is drawn by `audits.change_plot` on a fixed
axis from −1 to +1, with dashed lines at ±threshold, coloured by `audits.effect_tone`'s rule (grey when the CI spans
0). The figure's <title> and aria-label state the cell and the numbers (r, CI, n) as the finding's text does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from audits.change_plot import PlotRow, change_plot_svg
from audits.heatmap_figures import format_number

FIGURE_WIDTH = 240  # the axis, in px: a small figure beside each finding's line


def finding_caption(finding: Mapping[str, Any], *, threshold: float, ci_label: str, tutor_name: str = "") -> str:
    """The figure's label: the cell, then r with its CI and n, then what the dashed lines are."""
    cell = (
        f"{finding['domain']} · {finding['dimension']}: {finding['level_a']} → {finding['level_b']} · "
        f"{finding['metric']}"
    )
    return (
        f"{tutor_name + ': ' if tutor_name else ''}{cell}: r = {format_number(finding['r'])}, {ci_label} "
        f"[{format_number(finding['ci_low'])}, {format_number(finding['ci_high'])}], n = {finding['n']}; "
        f"dashed lines at r = ±{threshold:g}, the threshold"
    )


def finding_figure_svg(finding: Mapping[str, Any], *, threshold: float, ci_label: str, tutor_name: str = "") -> str:
    """The finding's figure as one <svg> (class "finding-figure"), every text escaped; empty when r is undefined."""
    row = PlotRow("r", float(finding["r"]), float(finding["ci_low"]), float(finding["ci_high"]))
    return change_plot_svg(
        [row],
        finding_caption(finding, threshold=threshold, ci_label=ci_label, tutor_name=tutor_name),
        span=(-1.0, 1.0),
        marks=(-threshold, threshold),
        plot_width=FIGURE_WIDTH,
        css_class="finding-figure",
    )
