"""The compare page's change CI (fairness.change_ci) and its dot-and-whisker plot (audits.change_plot)."""

import math

from scipy import stats

from audits.change_plot import BLUE, GREY, RED, PlotRow, change_plot_svg
from audits.fairness import SummaryCell, change_ci


def cell(value: float, se: float) -> SummaryCell:
    return SummaryCell("t", "d", "explicit", "within", "g", value, 3, 0, 0, False, se)


def test_change_ci_is_normal_on_the_two_bounds():
    low, high = change_ci(cell(0.10, 0.03), cell(0.25, 0.04))
    half = stats.norm.ppf(0.975) * 0.05  # hypot(0.03, 0.04) = 0.05
    assert math.isclose(low, 0.15 - half) and math.isclose(high, 0.15 + half)
    assert all(math.isnan(v) for v in change_ci(cell(0.1, math.nan), cell(0.2, 0.01)))


def test_plot_draws_a_dot_and_whisker_per_change_coloured_by_its_ci():
    svg = change_plot_svg(
        [
            PlotRow("grew", 0.2, 0.1, 0.3),
            PlotRow("shrank", -0.2, -0.3, -0.1),
            PlotRow("unclear", 0.05, -0.1, 0.2),
            PlotRow("no CI", 0.1),
            PlotRow("undefined", math.nan),
        ],
        caption="changes <right − left>",
    )
    assert svg.count('class="dot"') == 4 and svg.count('class="whisker"') == 3
    assert f'stroke="{RED}"' in svg and f'stroke="{BLUE}"' in svg and f'stroke="{GREY}"' in svg
    assert "undefined" not in svg and "&lt;right − left&gt;" in svg
    assert change_plot_svg([PlotRow("x", math.nan)], caption="c") == ""
