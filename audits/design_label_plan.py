"""The human labels a judge-corrected reading of a design needs, said before the audit runs.

Per metric, the count per stratum (tutor × domain × condition) that `judge_corrected.labels_needed` gives for a
target half-width and the judge's error SD (one stratum per side of a contrast cell), times the design's strata,
times the annotators per turn. Pure: no Django.
"""

from collections.abc import Mapping
from dataclasses import dataclass

from .design import DesignPreview
from .judge_corrected import labels_needed

LABEL_PLAN_HALF_WIDTH = 0.25
LABEL_PLAN_HALF_WIDTH_MIN = 0.01  # on a 0–2 scale a difference lies in [−2, 2]; narrower than this is no plan
LABEL_PLAN_HALF_WIDTH_MAX = 2.0
# Annotators per turn of a judge-validation stage (its default overlap): each labelled turn costs this many labels.
VALIDATION_OVERLAP = 3

LABEL_PLAN_ASSUMPTIONS = (
    "λ = 1 (PPI++'s tuned λ does at least as well, so the counts are conservative), a judge-corrected cell's two "
    "sides each one stratum (tutor × domain × condition) sampled independently with the same count and equal "
    "inclusion probabilities, the judge's error SD the same on both sides, and the judge mean's own variance left "
    "out (many turns per side)."
)


@dataclass(frozen=True)
class LabelPlanRow:
    """One metric (or the typed SD, metric ""): labels per stratum and their totals over the design's strata;
    None without an error SD (fewer than 2 measured pairs)."""

    metric: str
    error_sd: float | None
    n_pairs: int | None  # the pairs the SD was measured on; None for a typed SD
    per_stratum: int | None
    turns: int | None  # per stratum × strata
    labels: int | None  # turns × overlap
    predicted_half_width: float | None
    exceeds_smallest_stratum: bool = False


@dataclass(frozen=True)
class DesignLabelPlan:
    """The human-labelled turns a judge-corrected reading of this design needs for a target half-width."""

    target_half_width: float
    alpha: float
    strata: int  # tutor × domain × condition cells with at least one question
    smallest_stratum_turns: int | None  # the fewest tutor turns a stratum can hold (questions × T_max)
    overlap: int
    rows: list[LabelPlanRow]
    assumptions: str = LABEL_PLAN_ASSUMPTIONS

    @property
    def level_percent(self) -> str:
        return f"{100 * (1 - self.alpha):g}"

    @property
    def all_metrics_row(self) -> LabelPlanRow | None:
        """The row with the most labels per stratum: a labelled turn is labelled on every metric, so its count
        covers them all."""
        planned = [row for row in self.rows if row.per_stratum is not None]
        return max(planned, key=lambda row: row.per_stratum, default=None)


def design_strata(preview: DesignPreview) -> int:
    """Sampling strata of the design: every (tutor, domain, condition) with at least one question."""
    return sum(1 for row in preview.tutors for n in row.questions.values() if n > 0) * preview.conditions


def design_label_plan(
    preview: DesignPreview,
    error_sds: Mapping[str, float | None],
    *,
    n_pairs: Mapping[str, int] | None = None,
    target_half_width: float = LABEL_PLAN_HALF_WIDTH,
    alpha: float = 0.05,
    overlap: int = VALIDATION_OVERLAP,
) -> DesignLabelPlan:
    """Per metric (`error_sds`: metric → the judge's error SD, None when unmeasured), the labels per stratum
    `judge_corrected.labels_needed` asks for with one stratum per side, and their totals over this design."""
    strata = design_strata(preview)
    capacities = [n * preview.budget.t_max for row in preview.tutors for n in row.questions.values() if n > 0]
    smallest = min(capacities, default=None) if preview.conditions else None
    rows = []
    for metric, sd in error_sds.items():
        pairs = (n_pairs or {}).get(metric)
        if sd is None:
            rows.append(LabelPlanRow(metric, None, pairs, None, None, None, None))
            continue
        plan = labels_needed(sd, sd, target_half_width, alpha=alpha, strata_a=1, strata_b=1)
        turns = plan.per_stratum_a * strata
        rows.append(
            LabelPlanRow(
                metric=metric,
                error_sd=float(sd),
                n_pairs=pairs,
                per_stratum=plan.per_stratum_a,
                turns=turns,
                labels=turns * overlap,
                predicted_half_width=plan.predicted_half_width,
                exceeds_smallest_stratum=smallest is not None and plan.per_stratum_a > smallest,
            )
        )
    return DesignLabelPlan(target_half_width, alpha, strata, smallest, overlap, rows)
