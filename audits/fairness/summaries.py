"""Summaries of contrast tables as in EduFair-Bench: dimension cells, thresholds, tutor vs backbone."""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

from audits.analysis_parameters import ANALYSIS_DEFAULTS
from audits.fairness.effect_table import ContrastResult, ContrastTable
from audits.fairness.frames import TURN_METRICS

# --------------------------------------------------------------------------------------------------
# Summaries as in the paper
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SummaryCell:
    """Mean |r| over the sufficient (contrast, metric) rows of one summary cell.

    ``group`` is the dimension (dimension cells), the metric (metric × tutor), the implicit row
    (gender / ethnicity / both) or the opposite component. NaN when every row is insufficient.
    """

    tutor: Hashable
    domain: Hashable
    kind: str
    family: str
    group: Hashable
    value: float
    n_rows: int
    n_insufficient: int
    n_violations: int
    over_threshold: bool
    # An upper bound on the standard error of `value`: the mean of the usable rows' bootstrap standard
    # errors ((CI width) / (2 z)), as if the rows' errors were perfectly correlated (they share questions).
    se_bound: float = math.nan


def _summarise(
    table: ContrastTable, *, kind: str, family: str | None, metrics: Sequence[Hashable] | None, by_metric: bool
) -> list[SummaryCell]:
    groups: dict[tuple[Hashable, Hashable, str, str, Hashable], list[ContrastResult]] = {}
    for row in table.rows:
        if row.kind != kind or (family is not None and row.family != family):
            continue
        if metrics is not None and row.metric not in metrics:
            continue
        group = row.metric if by_metric else row.dimension
        groups.setdefault((row.tutor, row.domain, row.kind, row.family, group), []).append(row)
    cells = []
    z = float(stats.norm.ppf(0.5 + table.parameters.confidence / 2))
    for (tutor, domain, cell_kind, cell_family, group), rows in groups.items():
        usable_rows = [row for row in rows if not row.insufficient and not math.isnan(row.r)]
        usable = [abs(row.r) for row in usable_rows]
        value = float(np.mean(usable)) if usable else math.nan
        widths = [row.ci_high - row.ci_low for row in usable_rows if math.isfinite(row.ci_high - row.ci_low)]
        se_bound = float(np.mean(widths)) / (2 * z) if widths else math.nan
        cells.append(
            SummaryCell(
                tutor=tutor,
                domain=domain,
                kind=cell_kind,
                family=cell_family,
                group=group,
                value=value,
                n_rows=len(rows),
                n_insufficient=sum(row.insufficient for row in rows),
                n_violations=sum(row.violation for row in rows),
                over_threshold=bool(usable) and value >= table.parameters.threshold,
                se_bound=se_bound,
            )
        )
    return cells


def dimension_cells(
    table: ContrastTable, *, family: str = "within", metrics: Sequence[Hashable] = TURN_METRICS
) -> list[SummaryCell]:
    """Explicit (tutor, domain, dimension) cells: mean |r| over the five turn-level metrics ("pedagogical
    |r|") and over the dimension's contrasts (one for two-level dimensions, three for gender)."""
    return _summarise(table, kind="explicit", family=family, metrics=metrics, by_metric=False)


def metric_by_tutor(table: ContrastTable, *, family: str = "within") -> list[SummaryCell]:
    """Explicit (tutor, domain, metric) cells: mean |r| over all dimension contrasts of the family."""
    return _summarise(table, kind="explicit", family=family, metrics=None, by_metric=True)


def implicit_rows(table: ContrastTable, *, metrics: Sequence[Hashable] = TURN_METRICS) -> list[SummaryCell]:
    """Implicit (tutor, domain, row) cells, row = gender / ethnicity / both: pedagogical |r| of the names."""
    return _summarise(table, kind="implicit", family="names", metrics=metrics, by_metric=False)


def opposite_decomposition(table: ContrastTable, *, metrics: Sequence[Hashable] = TURN_METRICS) -> list[SummaryCell]:
    """Opposite (tutor, domain, component) cells: pedagogical |r| of the Correct gap, Wrong gap, tutor
    effect, simulator effect and interaction (signed per-metric values are in the table's rows)."""
    return _summarise(table, kind="opposite", family="opposite", metrics=metrics, by_metric=False)


@dataclass(frozen=True)
class BackboneChange:
    domain: Hashable
    kind: str
    family: str
    group: Hashable
    backbone_value: float
    tutor_value: float
    change: float  # tutor − backbone
    # An approximate, conservative CI of the change: normal, with each side's se_bound, the two sides taken
    # as independent (for two tutors on the same questions a positive correlation only narrows the truth).
    change_ci_low: float = math.nan
    change_ci_high: float = math.nan


CHANGE_CI_METHOD = (
    "approximate CI of the change: normal, each side's standard error bounded by the mean of its rows' "
    "bootstrap standard errors (rows treated as fully correlated), the two sides treated as independent; "
    "both choices widen it"
)


def change_ci(
    base: SummaryCell, other: SummaryCell, confidence: float = ANALYSIS_DEFAULTS.confidence
) -> tuple[float, float]:
    """(low, high) of `other.value − base.value` by CHANGE_CI_METHOD; NaN when either side has no bound."""
    change = other.value - base.value
    if not (math.isfinite(change) and math.isfinite(base.se_bound) and math.isfinite(other.se_bound)):
        return math.nan, math.nan
    half = float(stats.norm.ppf(0.5 + confidence / 2)) * math.hypot(base.se_bound, other.se_bound)
    return change - half, change + half


def tutor_vs_backbone(
    cells: Sequence[SummaryCell],
    *,
    tutor: Hashable,
    backbone: Hashable,
    confidence: float = ANALYSIS_DEFAULTS.confidence,
) -> list[BackboneChange]:
    """Per summary cell present for both, the backbone's and the tutor's value and the change (the paper's
    TutorRL-7B vs Qwen2.5-7B comparison: e.g. corrective_tone 0.159 → 0.104), with `change_ci`."""
    index = {(c.tutor, c.domain, c.kind, c.family, c.group): c for c in cells}
    changes = []
    for (cell_tutor, domain, kind, family, group), base in index.items():
        if cell_tutor != backbone:
            continue
        other = index.get((tutor, domain, kind, family, group))
        if other is None:
            continue
        low, high = change_ci(base, other, confidence)
        changes.append(
            BackboneChange(domain, kind, family, group, base.value, other.value, other.value - base.value, low, high)
        )
    return changes
