"""The judge-corrected table of an audit: its cells, their order and flat rows, and the estimator in words (pure).

There is one cell per tutor, domain, contrast and turn-level metric; the table also holds the turn scores grouped per
(tutor, domain, metric, condition) that the cells' sides are cut from, and the flat rows are for the exports.

Pure numpy (no Django): the service (`audits.services.judge_corrected`) reads the turns and the human subset and
calls the arithmetic of `audits.judge_corrected` through here; the pages, exports and tests read the result.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

import numpy as np

from audits.judge_corrected import (
    MIN_LABELLED,
    CorrectedDifference,
    CueCheck,
    Disagreement,
    SideData,
    corrected_difference,
    cue_check,
    disagreement,
    disagreement_sort_key,
    opposite_sides,
)

DISAGREEMENT_BADGES: dict[str, str] = {
    "unsupported": "flag not supported by humans",
    "hidden": "gap the judge hides",
}


class HumanLabels(Protocol):
    """What the table reads of the audit's human subset (annotation's `HumanSubset` has these fields)."""

    project_id: int
    project_name: str
    rubric_label: str
    labelled_items: int
    updated_at: datetime | None
    values: Mapping[str, Mapping[int, tuple[float, float]]]  # metric → turn id → (human value, π)


@dataclass(frozen=True)
class CorrectedCell:
    """One (tutor, domain, contrast, metric) cell: the judge-only flag of the audit's analysis beside the
    judge-corrected difference B − A, the judge's cue check and whether the two readings disagree."""

    tutor: str
    tutor_id: int
    domain: str
    kind: str
    dimension: str
    level_a: str
    level_b: str
    metric: str
    judge_only_flag: bool
    result: CorrectedDifference
    cue: CueCheck
    disagreement: Disagreement | None
    family: str = ""
    judge_only_insufficient: bool = False  # the analysis had too few question pairs to flag the cell at all

    @property
    def badge(self) -> str:
        return DISAGREEMENT_BADGES.get(self.disagreement or "", "")

    @property
    def reason(self) -> str:
        """Why the cell disagrees (or agrees), in words: the judge-only reading against the corrected interval."""
        return disagreement_reason(self)


@dataclass(frozen=True)
class JudgeCorrectedResults:
    """An audit's judge-corrected table: the human subset it rests on (None without a validation project), its
    cells (disagreeing first, then by |corrected difference|, largest first), how many cells were skipped for
    want of 2 human labels on a side, the estimator in words, and the interval level."""

    subset: HumanLabels | None
    cells: list[CorrectedCell]
    skipped: int
    methods: str
    alpha: float = 0.05

    @property
    def disagreeing(self) -> list[CorrectedCell]:
        return [cell for cell in self.cells if cell.disagreement is not None]

    @property
    def cue_sensitive(self) -> list[CorrectedCell]:
        return [cell for cell in self.cells if cell.cue.cue_sensitive]

    @property
    def cue_sensitive_metrics(self) -> list[str]:
        """The metrics with at least one contrast where the judge errs differently on the two sides."""
        return list(dict.fromkeys(cell.metric for cell in self.cue_sensitive))


def _interval_text(interval) -> str:
    return f"{interval.estimate:+.3f} [{interval.ci_low:+.3f}, {interval.ci_high:+.3f}]"


def disagreement_reason(cell: CorrectedCell) -> str:
    """The judge-only reading against the corrected interval, as the table's reason column says it."""
    level = f"{100 * (1 - cell.result.alpha):g}%"
    judge = _interval_text(cell.result.judge_only)
    corrected = _interval_text(cell.result.corrected)
    if cell.judge_only_insufficient:
        return (
            f"the judge-only analysis has too few question pairs to flag this cell; the corrected {level} interval "
            f"{corrected} is shown, but there is no flag to compare it with"
        )
    if not cell.result.interval_estimable:
        sides = " and ".join(cell.result.constant_human_sides)
        return (
            f"the human labels on side {sides} are all one value, so the corrected interval's width cannot be "
            f"estimated from them ({corrected} is too narrow to judge by); label more turns of this cell"
        )
    if cell.disagreement == "unsupported" and opposite_sides(cell.result):
        return (
            f"the judge-only analysis flags this cell (judge-only B − A {judge}), but the corrected {level} interval "
            f"{corrected} lies on the other side of 0: the human labels point the other way"
        )
    if cell.disagreement == "unsupported":
        return (
            f"the judge-only analysis flags this cell (judge-only B − A {judge}), but the corrected {level} interval "
            f"{corrected} covers 0: the human labels do not support the gap"
        )
    if cell.disagreement == "hidden":
        return (
            f"the judge-only analysis does not flag this cell (judge-only B − A {judge}), but the corrected {level} "
            f"interval {corrected} excludes 0: the human labels show a gap the judge's scores hide"
        )
    if cell.judge_only_flag:
        return f"flagged, and the corrected {level} interval {corrected} excludes 0 as well"
    return f"not flagged, and the corrected {level} interval {corrected} covers 0 as well"


def cell_order_key(cell: CorrectedCell) -> tuple:
    """Disagreeing cells first (unsupported flags, then hidden gaps), then the largest |corrected difference|;
    ties in the table's reading order."""
    return (
        disagreement_sort_key(cell.disagreement),
        -abs(cell.result.corrected.estimate),
        cell.tutor_id,
        cell.domain,
        cell.kind,
        cell.family,
        cell.dimension,
        cell.level_a,
        cell.level_b,
        cell.metric,
    )


def methods_text(alpha: float = 0.05) -> str:
    """The estimator in words: the methods box of the page, the head of the exports."""
    level = f"{100 * (1 - alpha):g}%"
    return (
        "Judge-corrected difference B − A of a metric's mean per tutor turn, by prediction-powered inference "
        "(PPI++: Angelopoulos, Duchi and Zrnic 2023, via ppi_py). Each side (the tutor turns of the finished "
        "dialogues of one tutor and domain under that side's conditions, pooled) is estimated on its own: the "
        "judge's mean over every scored turn, rectified by the mean of (human − λ·judge) over the turns humans "
        "labelled, with λ power-tuned per side (ppi_py, clipped to [0, 1]; λ = 0 is the humans' mean alone, "
        "λ = 1 the classic PPI rectifier). Labelled turns are weighted by 1 / their inclusion probability (their "
        "stratum's share chosen for labelling: tutor × domain × condition), so unequal sampling across strata "
        f"does not bias the mean. The {level} interval is normal, se² = se_A² + se_B²: the two sides are treated "
        "as independent. The pairing by question that the judge-only analysis uses is not used here; it usually "
        "correlates the sides positively, so ignoring it errs wide (conservative). Beside it, the judge-only "
        "difference of the same turn-level means with the classical interval under the same independence. The "
        "judge-only flag is the analysis's violation flag (paired by question, at the dialogue level). A cell "
        '"flag not supported by humans" is flagged by the judge-only analysis while the corrected interval '
        'covers 0; "gap the judge hides" is not flagged while the corrected interval excludes 0. Cue check: the '
        "judge's mean error (judge − human) on each side's labelled turns, and Welch's t-test of their "
        f"difference; p < {alpha:g} marks the judge cue-sensitive for that contrast. Turns the judge did not "
        f"score (n/a, unparsable, failed) and labels of n/a are left out; cells with fewer than {MIN_LABELLED} "
        "human-labelled turns on a side are skipped."
    )


# --- turn scores grouped per (tutor, domain, metric, condition) ---------------------------------------------


def attach_human(
    turn: np.ndarray, metric: np.ndarray, values: Mapping[str, Mapping[int, tuple[float, float]]]
) -> tuple[np.ndarray, np.ndarray]:
    """Per (turn, metric) row, the human value and the turn's inclusion probability (NaN where unlabelled)."""
    human = np.full(turn.size, np.nan)
    probability = np.full(turn.size, np.nan)
    for name, labels in values.items():
        if not labels:
            continue
        rows = np.flatnonzero(metric == name)
        if rows.size == 0:
            continue
        ids = np.fromiter(labels.keys(), dtype=np.int64, count=len(labels))
        pairs = np.asarray(list(labels.values()), dtype=float).reshape(-1, 2)
        order = np.argsort(ids)
        ids, pairs = ids[order], pairs[order]
        position = np.minimum(np.searchsorted(ids, turn[rows]), ids.size - 1)
        found = ids[position] == turn[rows]
        human[rows[found]] = pairs[position[found], 0]
        probability[rows[found]] = pairs[position[found], 1]
    return human, probability


def _plain(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


@dataclass(frozen=True)
class TurnBlocks:
    """The judge's scores (and human labels) of tutor turns, sorted into one contiguous block per (tutor, domain,
    metric, condition), so that a contrast side is a few slices."""

    judge: np.ndarray
    human: np.ndarray
    probability: np.ndarray
    blocks: dict[tuple[Hashable, Hashable, Hashable, Hashable], tuple[int, int, int]]  # key → (start, stop, n labelled)

    @classmethod
    def build(
        cls,
        *,
        tutor: np.ndarray,
        domain: np.ndarray,
        metric: np.ndarray,
        condition: np.ndarray,
        judge: np.ndarray,
        human: np.ndarray,
        probability: np.ndarray,
    ) -> TurnBlocks:
        n = judge.size
        if n == 0:
            return cls(judge=judge, human=human, probability=probability, blocks={})
        uniques, codes = [], []
        for column in (tutor, domain, metric, condition):
            values, code = np.unique(column, return_inverse=True)
            uniques.append(values)
            codes.append(code.astype(np.int64))
        combined = np.zeros(n, dtype=np.int64)
        for values, code in zip(uniques, codes, strict=True):
            combined = combined * values.size + code
        order = np.argsort(combined, kind="stable")
        combined = combined[order]
        starts = np.flatnonzero(np.r_[True, combined[1:] != combined[:-1]])
        stops = np.r_[starts[1:], n]
        labelled = np.r_[0, np.cumsum(~np.isnan(human[order]))]
        blocks = {}
        for start, stop in zip(starts.tolist(), stops.tolist(), strict=True):
            first = order[start]
            key = tuple(_plain(values[code[first]]) for values, code in zip(uniques, codes, strict=True))
            blocks[key] = (start, stop, int(labelled[stop] - labelled[start]))
        return cls(judge=judge[order], human=human[order], probability=probability[order], blocks=blocks)

    def _side_blocks(self, tutor, domain, metric, conditions: Sequence[Hashable]) -> list[tuple[int, int, int]]:
        return [found for condition in conditions if (found := self.blocks.get((tutor, domain, metric, condition)))]

    def n_labelled(self, tutor, domain, metric, conditions: Sequence[Hashable]) -> int:
        return sum(labelled for _, _, labelled in self._side_blocks(tutor, domain, metric, conditions))

    def side(self, tutor, domain, metric, conditions: Sequence[Hashable]) -> SideData | None:
        """The side's judge scores on every turn and its labelled turns, or None when it has no scored turn."""
        found = self._side_blocks(tutor, domain, metric, conditions)
        if not found:
            return None
        rows = np.concatenate([np.arange(start, stop) for start, stop, _ in found])
        judge, human = self.judge[rows], self.human[rows]
        labelled = ~np.isnan(human)
        return SideData(
            judge_all=judge,
            human=human[labelled],
            judge_labelled=judge[labelled],
            inclusion_probability=self.probability[rows][labelled],
        )


def corrected_cell(
    *,
    tutor: str,
    tutor_id: int,
    domain: str,
    kind: str,
    family: str,
    dimension: str,
    level_a: str,
    level_b: str,
    metric: str,
    judge_only_flag: bool,
    side_a: SideData,
    side_b: SideData,
    alpha: float,
    judge_only_insufficient: bool = False,
) -> CorrectedCell:
    result = corrected_difference(side_a, side_b, alpha=alpha)
    with warnings.catch_warnings():
        # A judge that agrees with every label errs by a constant 0 on both sides: scipy's t-test warns of
        # "precision loss" before answering nan, which cue_check reads as "no evidence" (p = 1).
        warnings.filterwarnings("ignore", message="Precision loss", category=RuntimeWarning)
        cue = cue_check(side_a, side_b, alpha=alpha)
    return CorrectedCell(
        tutor=tutor,
        tutor_id=tutor_id,
        domain=domain,
        kind=kind,
        dimension=dimension,
        level_a=level_a,
        level_b=level_b,
        metric=metric,
        judge_only_flag=judge_only_flag,
        result=result,
        cue=cue,
        disagreement=disagreement(judge_only_flag, result, judge_only_insufficient=judge_only_insufficient),
        family=family,
        judge_only_insufficient=judge_only_insufficient,
    )


# --- flat rows, for the exports ----------------------------------------------------------------------------

CORRECTED_COLUMNS = (
    "tutor_id",
    "tutor",
    "domain",
    "kind",
    "family",
    "dimension",
    "level_a",
    "level_b",
    "metric",
    "disagreement",
    "badge",
    "reason",
    "judge_only_flag",
    "judge_only_insufficient",
    "human_labels_constant",
    "judge_only_estimate",
    "judge_only_se",
    "judge_only_ci_low",
    "judge_only_ci_high",
    "corrected_estimate",
    "corrected_se",
    "corrected_ci_low",
    "corrected_ci_high",
    "corrected_excludes_zero",
    "alpha",
    "n_turns_a",
    "n_turns_b",
    "n_labelled_a",
    "n_labelled_b",
    "estimate_a",
    "estimate_b",
    "lambda_a",
    "lambda_b",
    "cue_mean_error_a",
    "cue_mean_error_b",
    "cue_difference",
    "cue_p",
    "cue_sensitive",
)


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def corrected_row(cell: CorrectedCell) -> dict[str, Any]:
    """One cell as a flat row of `CORRECTED_COLUMNS` (numbers unrounded; None for a non-finite one)."""
    result, cue = cell.result, cell.cue
    return {
        "tutor_id": cell.tutor_id,
        "tutor": cell.tutor,
        "domain": cell.domain,
        "kind": cell.kind,
        "family": cell.family,
        "dimension": cell.dimension,
        "level_a": cell.level_a,
        "level_b": cell.level_b,
        "metric": cell.metric,
        "disagreement": cell.disagreement or "",
        "badge": cell.badge,
        "reason": cell.reason,
        "judge_only_flag": cell.judge_only_flag,
        "judge_only_insufficient": cell.judge_only_insufficient,
        "human_labels_constant": " ".join(result.constant_human_sides),
        "judge_only_estimate": _finite(result.judge_only.estimate),
        "judge_only_se": _finite(result.judge_only.se),
        "judge_only_ci_low": _finite(result.judge_only.ci_low),
        "judge_only_ci_high": _finite(result.judge_only.ci_high),
        "corrected_estimate": _finite(result.corrected.estimate),
        "corrected_se": _finite(result.corrected.se),
        "corrected_ci_low": _finite(result.corrected.ci_low),
        "corrected_ci_high": _finite(result.corrected.ci_high),
        "corrected_excludes_zero": result.corrected.excludes_zero,
        "alpha": result.alpha,
        "n_turns_a": result.side_a.n_turns,
        "n_turns_b": result.side_b.n_turns,
        "n_labelled_a": result.side_a.n_labelled,
        "n_labelled_b": result.side_b.n_labelled,
        "estimate_a": _finite(result.side_a.interval.estimate),
        "estimate_b": _finite(result.side_b.interval.estimate),
        "lambda_a": result.side_a.lam,
        "lambda_b": result.side_b.lam,
        "cue_mean_error_a": _finite(cue.mean_error_a),
        "cue_mean_error_b": _finite(cue.mean_error_b),
        "cue_difference": _finite(cue.difference),
        "cue_p": _finite(cue.p_value),
        "cue_sensitive": cue.cue_sensitive,
    }


def subset_facts(subset: HumanLabels | None) -> dict[str, Any] | None:
    """The validation project behind the table, as the exports and the API state it."""
    if subset is None:
        return None
    return {
        "project_id": subset.project_id,
        "project_name": subset.project_name,
        "rubric": subset.rubric_label,
        "labelled_items": subset.labelled_items,
        "updated_at": subset.updated_at.isoformat() if subset.updated_at else None,
    }
