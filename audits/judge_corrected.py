"""Judge-corrected fairness contrasts: prediction-powered (PPI++) differences of a metric's mean, B − A.

Pure numpy / scipy / ppi_py (no Django). A contrast cell is (tutor, metric, contrast A vs B); every tutor turn on
each side has a judge score, and a human-labelled subset of each side's turns, sampled with known inclusion
probabilities, also has a human score. The estimand is the difference of the human-score means, B − A.

The estimator, precisely. Per side, with judge scores ``f_1 … f_N`` on all N turns of the side (the labelled turns
included) and, for the n labelled turns, human scores ``y_i``, judge scores ``f_i`` and inclusion probabilities
``π_i``:

* weights ``w_i = (1/π_i) · n / Σ_j (1/π_j)`` (ppi_py's normalisation: mean 1; equal probabilities give w = 1),
  and weight 1 on every one of the N turns;
* λ is PPI++'s power-tuned value (``ppi_py``, ``lam=None``: ``lam_optim_mode="overall"``, clipped to [0, 1]),
  computed from gradients centred at the λ = 1 estimate;
* the side's estimate is ``θ = λ · mean(f_1 … f_N) + mean_i(w_i · (y_i − λ f_i))``: the judge's mean over every
  turn, rectified by the weighted (Hájek) mean of the labelled turns' residuals;
* its standard error is ppi_py's, ``se² = var(λ f_1 … λ f_N)/N + var_i(w_i · (y_i − λ f_i) − (1 − λ)·c·w_i)/n``
  (variances with ddof 0), computed by ``ppi_py.ppi_mean_ci`` on the scores less ``c``, the side's mean judge
  score, then shifted back. The shift leaves θ and λ unchanged; it matters only for ppi_py's weighted variance,
  which uses the uncentred weighted residual ``w_i r_i``: with unequal weights and a residual whose mean is far
  from 0 (λ < 1 leaves ``(1 − λ)·mean(y)`` in it) that variance grows by about ``mean(r)² · var(w)``. After the
  shift the residual's mean is the judge's bias, so the variance is close to the with-replacement variance of the
  Hájek mean. Without weights the shift changes nothing and the result is ppi_py's to rounding.
  The labelled turns are counted among the N as well; the covariance this brings (order 1/N) is ignored, as
  ppi_py does, which is harmless when n ≪ N.
* the interval is normal: ``θ ± z_{1−α/2} · se``.

The difference is ``θ_B − θ_A`` with ``se = sqrt(se_A² + se_B²)``: the two sides' human samples are drawn
independently. The judge means of the two sides are paired by question; their correlation (usually positive, which
makes this SE conservative) is ignored. Beside it, the judge-only difference is ``mean(f^B) − mean(f^A)`` over
all turns with the classical, sides-independent normal interval, ``se² = var(f^A)/N_A + var(f^B)/N_B`` (ddof 0,
as ``ppi_py.classical_mean_ci``): the same independence assumption as the corrected difference, so the two
intervals are comparable. Sources: Angelopoulos, Bates, Fannjiang, Jordan, Zrnic, "Prediction-powered inference",
Science 382 (2023); Angelopoulos, Duchi, Zrnic, "PPI++: Efficient prediction-powered inference" (2023).

Also here: ``disagreement`` (judge-only flag vs corrected interval), ``cue_check`` (does the judge err differently
on the two sides?) and the planner ``labels_needed`` with ``error_sd``.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy import stats

# ppi_py calls warnings.simplefilter("ignore") when it is imported, which would silence every warning of the
# process that imports this module (a web worker, the test run); the context restores the filters.
with warnings.catch_warnings():
    from ppi_py import ppi_mean_ci, ppi_mean_pointestimate

Disagreement = Literal["unsupported", "hidden"]

MIN_LABELLED = 2


def _vector(name: str, values: object) -> np.ndarray:
    array = np.asarray(values, dtype=float)
    if array.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {array.shape}")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} must be finite")
    return array


@dataclass(frozen=True)
class SideData:
    """One side of a contrast cell.

    ``judge_all``: the judge's score on every turn of the side, labelled turns included. ``human``,
    ``judge_labelled`` and ``inclusion_probability``: per human-labelled turn, the human score, the judge's score
    and the probability the turn had of being labelled (its stratum's); ``None`` means equal probabilities.
    """

    judge_all: np.ndarray
    human: np.ndarray
    judge_labelled: np.ndarray
    inclusion_probability: np.ndarray | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "judge_all", _vector("judge_all", self.judge_all))
        object.__setattr__(self, "human", _vector("human", self.human))
        object.__setattr__(self, "judge_labelled", _vector("judge_labelled", self.judge_labelled))
        if self.judge_all.size == 0:
            raise ValueError("a side needs judge scores on at least one turn")
        if self.human.shape != self.judge_labelled.shape:
            raise ValueError(
                f"human ({self.human.size}) and judge_labelled ({self.judge_labelled.size}) differ in length"
            )
        if self.human.size > self.judge_all.size:
            raise ValueError("more labelled turns than turns: judge_all must include every turn of the side")
        if self.inclusion_probability is not None:
            probability = _vector("inclusion_probability", self.inclusion_probability)
            if probability.shape != self.human.shape:
                raise ValueError("inclusion_probability needs one value per labelled turn")
            if np.any(probability <= 0) or np.any(probability > 1):
                raise ValueError("inclusion probabilities must lie in (0, 1]")
            object.__setattr__(self, "inclusion_probability", probability)

    @property
    def n_turns(self) -> int:
        return int(self.judge_all.size)

    @property
    def n_labelled(self) -> int:
        return int(self.human.size)

    @property
    def weights(self) -> np.ndarray | None:
        """1/π per labelled turn (unnormalised; ppi_py normalises), or None for equal probabilities."""
        return None if self.inclusion_probability is None else 1.0 / self.inclusion_probability


@dataclass(frozen=True)
class Interval:
    """A point estimate with its standard error and normal interval at 1 − alpha."""

    estimate: float
    se: float
    ci_low: float
    ci_high: float

    @property
    def excludes_zero(self) -> bool:
        return self.ci_low > 0 or self.ci_high < 0

    @property
    def half_width(self) -> float:
        return (self.ci_high - self.ci_low) / 2


@dataclass(frozen=True)
class SideEstimate:
    """A side's PPI++ mean (``interval``), its λ, and how many turns and labelled turns it rests on."""

    interval: Interval
    lam: float
    n_turns: int
    n_labelled: int


@dataclass(frozen=True)
class CorrectedDifference:
    """One cell: the corrected difference B − A, the judge-only difference, and each side's estimate."""

    corrected: Interval
    judge_only: Interval
    side_a: SideEstimate
    side_b: SideEstimate
    alpha: float
    # Sides ("A", "B") whose human labels are all one value: their spread cannot be estimated from them (the
    # tuned λ drops to 0 and the side's SE with it), so the corrected interval is too narrow to judge by.
    constant_human_sides: tuple[str, ...] = ()

    @property
    def interval_estimable(self) -> bool:
        return not self.constant_human_sides


def _z(alpha: float) -> float:
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha}")
    return float(stats.norm.ppf(1 - alpha / 2))


def _normal_interval(estimate: float, se: float, z: float) -> Interval:
    return Interval(estimate=estimate, se=se, ci_low=estimate - z * se, ci_high=estimate + z * se)


def _require_labels(side: SideData, name: str = "") -> None:
    if side.n_labelled < MIN_LABELLED:
        which = f"side {name}" if name else "the side"
        raise ValueError(f"{which} has {side.n_labelled} human-labelled turn(s); at least {MIN_LABELLED} are needed")


def power_tuned_lambda(side: SideData) -> float:
    """PPI++'s λ for a mean, as ppi_py computes it with ``lam=None`` (overall mode, clipped to [0, 1])."""
    _require_labels(side)
    n, big_n = side.n_labelled, side.n_turns
    weights = side.weights
    w = np.ones(n) if weights is None else weights / weights.sum() * n
    y, f, f_all = side.human, side.judge_labelled, side.judge_all
    theta = f_all.mean() + (w * (y - f)).mean()
    grads = w * (y - theta)
    grads_hat = w * (f - theta)
    grads_hat_all = f_all - theta
    covariance = 2 * np.mean((grads - grads.mean()) * (grads_hat - grads_hat.mean()))
    variance = np.var(np.concatenate([grads_hat, grads_hat_all]), ddof=1)
    if variance == 0:
        # Constant judge scores carry no information: ppi_py's ratio is nan here; λ = 0 is the classical mean.
        return 0.0
    return float(np.clip(covariance / (2 * (1 + n / big_n) * variance), 0, 1))


def side_estimate(side: SideData, *, alpha: float = 0.05) -> SideEstimate:
    """A side's PPI++ mean with its standard error and interval (see the module docstring)."""
    _require_labels(side)
    z = _z(alpha)
    lam = power_tuned_lambda(side)
    shift = float(side.judge_all.mean())
    estimate = float(
        np.asarray(
            ppi_mean_pointestimate(side.human, side.judge_labelled, side.judge_all, lam=lam, w=side.weights)
        ).item()
    )
    low, high = ppi_mean_ci(
        side.human - shift,
        side.judge_labelled - shift,
        side.judge_all - shift,
        alpha=alpha,
        lam=lam,
        w=side.weights,
    )
    se = float((np.asarray(high).item() - np.asarray(low).item()) / (2 * z))
    return SideEstimate(
        interval=_normal_interval(estimate, se, z), lam=lam, n_turns=side.n_turns, n_labelled=side.n_labelled
    )


def judge_only_difference(a: SideData, b: SideData, *, alpha: float = 0.05) -> Interval:
    """Mean judge score over all turns, B − A, with the classical sides-independent normal interval."""
    z = _z(alpha)
    estimate = float(b.judge_all.mean() - a.judge_all.mean())
    se = math.sqrt(a.judge_all.var() / a.n_turns + b.judge_all.var() / b.n_turns)
    return _normal_interval(estimate, se, z)


def corrected_difference(a: SideData, b: SideData, *, alpha: float = 0.05) -> CorrectedDifference:
    """The cell's PPI++ difference B − A and its interval, beside the judge-only difference."""
    _require_labels(a, "A")
    _require_labels(b, "B")
    z = _z(alpha)
    side_a = side_estimate(a, alpha=alpha)
    side_b = side_estimate(b, alpha=alpha)
    estimate = side_b.interval.estimate - side_a.interval.estimate
    se = math.hypot(side_a.interval.se, side_b.interval.se)
    return CorrectedDifference(
        corrected=_normal_interval(estimate, se, z),
        judge_only=judge_only_difference(a, b, alpha=alpha),
        side_a=side_a,
        side_b=side_b,
        alpha=alpha,
        constant_human_sides=tuple(name for name, side in (("A", a), ("B", b)) if np.ptp(side.human) == 0),
    )


def opposite_sides(corrected: CorrectedDifference) -> bool:
    """Whether the corrected interval excludes 0 on the other side than the judge-only difference points."""
    gap = corrected.corrected
    return gap.excludes_zero and (gap.estimate > 0) != (corrected.judge_only.estimate > 0)


def disagreement(
    judge_only_flag: bool, corrected: CorrectedDifference, *, judge_only_insufficient: bool = False
) -> Disagreement | None:
    """``"unsupported"``: the judge-only analysis flags the cell but the corrected interval covers 0, or lies on
    the other side of 0 than the judge's difference; ``"hidden"``: it does not flag it but the corrected interval
    excludes 0; None when they agree — and None
    when either side cannot be read: the judge-only cell had too few pairs to be flagged at all, or a side's
    human labels are all one value (the corrected interval's width is then not estimable from them)."""
    if judge_only_insufficient or not corrected.interval_estimable:
        return None
    excludes_zero = corrected.corrected.excludes_zero
    if judge_only_flag and (not excludes_zero or opposite_sides(corrected)):
        return "unsupported"
    if not judge_only_flag and excludes_zero:
        return "hidden"
    return None


_DISAGREEMENT_ORDER: dict[str | None, int] = {"unsupported": 0, "hidden": 1, None: 2}


def disagreement_sort_key(kind: Disagreement | None) -> int:
    """Sort key that lists disagreeing cells first: unsupported flags, then hidden ones, then agreeing cells."""
    return _DISAGREEMENT_ORDER[kind]


@dataclass(frozen=True)
class CueCheck:
    """The judge's mean error (judge − human) on each side's labelled turns, their difference B − A, Welch's p."""

    mean_error_a: float
    mean_error_b: float
    difference: float
    p_value: float
    cue_sensitive: bool


def cue_check(a: SideData, b: SideData, *, alpha: float = 0.05) -> CueCheck:
    """Does the judge err differently on the two sides? Welch's two-sample t-test (``scipy.stats.ttest_ind``,
    ``equal_var=False``) of judge − human on the labelled turns of B against those of A.

    Unweighted: it compares the errors of the labelled turns as drawn. That is the comparison wanted when both
    sides are sampled with the same per-domain design (the labels are stratified by tutor, domain and condition);
    if the designs differ and the judge's error depends on the domain, the difference also reflects the mix.
    """
    _require_labels(a, "A")
    _require_labels(b, "B")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha}")
    error_a = a.judge_labelled - a.human
    error_b = b.judge_labelled - b.human
    result = stats.ttest_ind(error_b, error_a, equal_var=False)
    p_value = float(result.pvalue)
    if math.isnan(p_value):
        # Both sides' errors constant: equal means give no evidence, unequal ones are certain.
        p_value = 1.0 if error_a.mean() == error_b.mean() else 0.0
    return CueCheck(
        mean_error_a=float(error_a.mean()),
        mean_error_b=float(error_b.mean()),
        difference=float(error_b.mean() - error_a.mean()),
        p_value=p_value,
        cue_sensitive=p_value < alpha,
    )


def error_sd(judge: object, human: object) -> float:
    """SD (ddof 1) of the judge's error, judge − human, over a pilot's (judge, human) pairs."""
    judge_scores, human_scores = _vector("judge", judge), _vector("human", human)
    if judge_scores.shape != human_scores.shape:
        raise ValueError("judge and human need one score each per pilot turn")
    if judge_scores.size < 2:
        raise ValueError("an error SD needs at least 2 pilot pairs")
    return float(np.std(judge_scores - human_scores, ddof=1))


@dataclass(frozen=True)
class LabelPlan:
    """Human-labelled turns needed per side, per stratum on each side, and the half-width predicted for them."""

    per_side: int
    per_stratum_a: int
    per_stratum_b: int
    predicted_half_width: float


def labels_needed(
    error_sd_a: float,
    error_sd_b: float,
    target_half_width: float,
    *,
    alpha: float = 0.05,
    strata_a: int = 1,
    strata_b: int = 1,
    design_effect: float = 1.0,
    n_turns_a: int | None = None,
    n_turns_b: int | None = None,
    judge_sd_a: float = 0.0,
    judge_sd_b: float = 0.0,
) -> LabelPlan:
    """How many human-labelled turns each side needs for the corrected interval's half-width to be at most
    ``target_half_width``, the same number n on both sides.

    With λ = 1 the rectifier is minus the judge's error, so

        half_width² = z² · (d·σ_eA²/n + d·σ_eB²/n + σ_fA²/N_A + σ_fB²/N_B),

    ``σ_e`` the judge's error SD (from a pilot: ``error_sd``), ``d`` the design effect of unequal inclusion
    probabilities (Kish's ``n·Σw²/(Σw)²``, 1 for equal ones), ``σ_f`` the judge scores' SD and N the side's turns.
    The last two terms are the judge mean's own variance; they vanish when N is large (omit ``n_turns_*``) and
    set a floor the target must exceed. Solved for n:

        n = ceil(z² · d · (σ_eA² + σ_eB²) / (target² − z² · (σ_fA²/N_A + σ_fB²/N_B))).

    PPI++'s tuned λ does at least as well as λ = 1 asymptotically, so n is an upper bound for it. Per stratum:
    ``ceil(n / strata)``, equal allocation over a side's strata.
    """
    z = _z(alpha)
    for name, value in (("error_sd_a", error_sd_a), ("error_sd_b", error_sd_b)):
        if not value >= 0:
            raise ValueError(f"{name} must be non-negative, got {value}")
    if not target_half_width > 0:
        raise ValueError(f"target_half_width must be positive, got {target_half_width}")
    if strata_a < 1 or strata_b < 1:
        raise ValueError("each side needs at least one stratum")
    if not design_effect >= 1:
        raise ValueError(f"design_effect must be at least 1, got {design_effect}")
    floor_variance = 0.0
    for n_turns, judge_sd in ((n_turns_a, judge_sd_a), (n_turns_b, judge_sd_b)):
        if n_turns is not None:
            if n_turns < 1:
                raise ValueError("n_turns must be positive")
            floor_variance += judge_sd**2 / n_turns
    available = target_half_width**2 - z**2 * floor_variance
    if available <= 0:
        floor = z * math.sqrt(floor_variance)
        raise ValueError(
            f"target half-width {target_half_width} is at or below {floor:.4g}, the half-width of the judge "
            "mean alone: no number of labels reaches it"
        )
    rectifier_variance = design_effect * (error_sd_a**2 + error_sd_b**2)
    n = max(MIN_LABELLED, math.ceil(z**2 * rectifier_variance / available))
    per_stratum_a, per_stratum_b = math.ceil(n / strata_a), math.ceil(n / strata_b)
    predicted = z * math.sqrt(rectifier_variance / n + floor_variance)
    return LabelPlan(
        per_side=n, per_stratum_a=per_stratum_a, per_stratum_b=per_stratum_b, predicted_half_width=predicted
    )


def kish_design_effect(inclusion_probability: object) -> float:
    """Kish's design effect of unequal weights 1/π: ``n · Σw² / (Σw)²`` (1 when all probabilities are equal)."""
    weights = 1.0 / _vector("inclusion_probability", inclusion_probability)
    return float(weights.size * np.sum(weights**2) / np.sum(weights) ** 2)
