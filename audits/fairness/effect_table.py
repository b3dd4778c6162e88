"""The contrast table: its rows and p-value names, Benjamini–Hochberg adjustment, violation flags."""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from statsmodels.stats.multitest import multipletests

from audits.analysis_parameters import AnalysisParameters
from audits.exact_signed_rank import EXACT_MAX_NONZERO
from audits.fairness.frames import STUDENT_DEPENDENT_METRICS, Contrast
from audits.violation_rules import DEFAULT_RULE, is_bh_violation


@dataclass(frozen=True)
class ContrastResult:
    """One row of a contrast table: a PairedEffect for (tutor, domain, contrast, metric), flattened."""

    tutor: Hashable
    domain: Hashable
    kind: str
    family: str
    dimension: str
    level_a: str
    level_b: str
    metric: Hashable
    n_questions: int
    n: int
    n_nonzero: int
    r: float
    z: float
    p: float
    p_adjusted: float
    ci_low: float
    ci_high: float
    violation: bool
    insufficient: bool
    n_boot_degenerate: int
    seed: int
    rule: str = DEFAULT_RULE
    p_test: float = math.nan
    p_method: str = "normal"
    violation_bh: bool = False
    mean_diff: float = math.nan
    mean_diff_ci_low: float = math.nan
    mean_diff_ci_high: float = math.nan
    share_b_higher: float = math.nan
    share_a_higher: float = math.nan
    saturated: bool = False
    simulator_driven: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @property
    def p_exact(self) -> float:
        """The exact signed-rank p given ties and zeros; NaN where it was not computed (above EXACT_MAX_NONZERO)."""
        return self.p_test if self.p_method == "exact" else math.nan

    @property
    def p_normal(self) -> float:
        """The normal approximation's p, with tie correction (every sufficient row has one)."""
        return self.p

    def p_values(self) -> dict[str, float]:
        """The row's p-values by the names every table, export and page uses (P_VALUE_NAMES)."""
        return {"p_exact": self.p_exact, "p_normal": self.p_normal, "p_adjusted": self.p_adjusted}


# The p-values of a contrast row, by name: one home for the CSV/JSON columns, the page headers and the methods text.
P_VALUE_NAMES = {
    "p_exact": "exact Wilcoxon signed-rank p given ties and zeros (computed up to "
    f"{EXACT_MAX_NONZERO} non-zero differences; empty above)",
    "p_normal": "Wilcoxon signed-rank p by the normal approximation with tie correction",
    "p_adjusted": "Benjamini–Hochberg-adjusted p within the table family, over the p the rule uses: p_exact where "
    "it exists, else p_normal (p_method names which)",
}


@dataclass(frozen=True)
class ContrastTable:
    rows: tuple[ContrastResult, ...]
    parameters: AnalysisParameters
    metrics: tuple[Hashable, ...]
    contrasts: tuple[Contrast, ...] = field(repr=False)

    def __len__(self) -> int:
        return len(self.rows)

    def records(self) -> list[dict[str, Any]]:
        return [row.as_dict() for row in self.rows]

    def where(self, **equal: Any) -> list[ContrastResult]:
        """Rows whose fields equal the given values, e.g. ``table.where(tutor="qwen", metric="actionability")``."""
        return [row for row in self.rows if all(getattr(row, k) == v for k, v in equal.items())]


def _with_bh(rows: list[ContrastResult], params: AnalysisParameters) -> list[ContrastResult]:
    families: dict[tuple[str, str], list[int]] = {}
    for i, row in enumerate(rows):
        if not row.insufficient and not math.isnan(row.p_test):
            families.setdefault((row.kind, row.family), []).append(i)
    adjusted = [math.nan] * len(rows)
    for members in families.values():
        _, p_adjusted, _, _ = multipletests([rows[i].p_test for i in members], method="fdr_bh")
        for i, value in zip(members, p_adjusted, strict=True):
            adjusted[i] = float(value)
    return [
        _replace(
            row,
            p_adjusted=value,
            violation_bh=is_bh_violation(
                insufficient=row.insufficient, r=row.r, p_adjusted=value, threshold=params.threshold, fdr_q=params.fdr_q
            ),
        )
        for row, value in zip(rows, adjusted, strict=True)
    ]


def _replace(row: ContrastResult, **changes: Any) -> ContrastResult:
    values = row.as_dict()
    values.update(changes)
    return ContrastResult(**values)


def mark_simulator_driven(
    conversation: ContrastTable,
    student: ContrastTable,
    *,
    dependent_metrics: Sequence[Hashable] = STUDENT_DEPENDENT_METRICS,
) -> ContrastTable:
    """Mark the cells of metrics built on student words as simulator-driven where the student's own turns
    differ between the contrast's levels (any student metric of the same tutor, domain and contrast with
    p_test < alpha, sufficient or not), and take them out of the violation counts: such a difference is
    the simulated student's, not the tutor's. Their r, p and CIs stay as computed."""
    alpha = student.parameters.alpha
    differing = {
        (row.tutor, row.domain, row.kind, row.family, row.dimension, row.level_a, row.level_b)
        for row in student.rows
        if not math.isnan(row.p_test) and row.p_test < alpha
    }
    rows = []
    for row in conversation.rows:
        key = (row.tutor, row.domain, row.kind, row.family, row.dimension, row.level_a, row.level_b)
        if row.metric in dependent_metrics and key in differing:
            row = _replace(row, simulator_driven=True, violation=False, violation_bh=False)
        rows.append(row)
    return ContrastTable(
        rows=tuple(rows),
        parameters=conversation.parameters,
        metrics=conversation.metrics,
        contrasts=conversation.contrasts,
    )


def is_flagged(
    table: ContrastTable,
    *,
    tutor: Hashable,
    domain: Hashable,
    dimension: str,
    metric: Hashable,
    kind: str = "explicit",
    family: str = "within",
) -> bool:
    """Whether any contrast of (tutor, domain, kind, family, dimension, metric) is a violation."""
    rows = table.where(tutor=tutor, domain=domain, kind=kind, family=family, dimension=dimension, metric=metric)
    return any(row.violation for row in rows)


def flagged_share(table: ContrastTable, *, kind: str | None = None, family: str | None = None) -> tuple[int, int]:
    """(violations, sufficient cells) over the table's rows, optionally of one kind / family."""
    rows = [
        row
        for row in table.rows
        if not row.insufficient and (kind is None or row.kind == kind) and (family is None or row.family == family)
    ]
    return sum(row.violation for row in rows), len(rows)
