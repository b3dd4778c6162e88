"""Planning a judge validation: items per annotator for the alt-test, items for κ's interval — pure, no Django.

`alt_test_plan` answers "how many items must each annotator label for a judge of this accuracy to pass the
alternative annotator test (`annotation.alt_test`) with probability ≥ target?" by simulation, in the spirit of
the authors' own simulation (Calderon, Reichart & Dror, ACL 2025, appendix C): every annotator labels every
item; a true label is drawn uniformly from the categories (or from ``class_shares``); each annotator gives it
with probability ``annotator_accuracy`` and otherwise a uniformly drawn other category, and the judge likewise
with ``judge_accuracy``. For each size on a small grid, ``n_datasets`` data sets are simulated and the
alt-test run (the same procedure as `annotation.alt_test`, vectorised over annotators); the answer is the
smallest size whose pass rate reaches the target, or None when no size on the grid does.

`kappa_half_width_plan` answers "how many items for Cohen's κ's 95 % interval to have half-width h?" from
the large-sample variance of κ for two raters and two classes (Fleiss, Cohen & Everitt 1969, Psychological
Bulletin 72), with both raters sharing the class prevalence. It is the asymptotic answer, not a simulation;
the bootstrap interval of `annotation.agreement_intervals.cohen_interval` at that n comes close to it
(annotation/tests/test_alt_test_plan.py checks within 15 %).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy.stats import norm
from statsmodels.stats.multitest import multipletests

from annotation.alt_test import DEFAULT_ALPHA, PASS_WINNING_RATE, one_sided_p

DEFAULT_SIZES: tuple[int, ...] = (30, 40, 50, 75, 100, 150, 200, 300)
DEFAULT_TARGET = 0.8
DEFAULT_DATASETS = 40


def _simulate_labels(
    rng: np.random.Generator, n_items: int, n_annotators: int, accuracy: Sequence[float], shares: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(truth, labels): labels is (len(accuracy)) × n_items; row r keeps the truth with probability
    accuracy[r], else takes one of the other categories uniformly."""
    k = shares.size
    truth = rng.choice(k, size=n_items, p=shares)
    acc = np.asarray(accuracy, dtype=float)[:, None]
    keep = rng.random((acc.shape[0], n_items)) < acc
    shift = rng.integers(1, k, size=(acc.shape[0], n_items))
    return truth, np.where(keep, truth, (truth + shift) % k)


def _passes(humans: np.ndarray, judge: np.ndarray, epsilon: float, alpha: float) -> bool:
    """The alt-test's decision on full-overlap categorical data (annotators × items), vectorised."""
    m = humans.shape[0]
    equal_judge = humans == judge[None, :]
    p_values = np.empty(m)
    for j in range(m):
        others = np.delete(humans, j, axis=0)
        s_judge = np.delete(equal_judge, j, axis=0).mean(axis=0)
        s_human = (others == humans[j][None, :]).mean(axis=0)
        diff = (s_human >= s_judge).astype(float) - (s_judge >= s_human).astype(float)
        p_values[j] = one_sided_p(diff, epsilon)
    rejected = multipletests(p_values, alpha=alpha, method="fdr_by")[0]
    return float(rejected.mean()) >= PASS_WINNING_RATE


def alt_test_plan(
    *,
    judge_accuracy: float,
    annotator_accuracy: float,
    n_annotators: int,
    epsilon: float,
    target: float = DEFAULT_TARGET,
    categories: int = 3,
    class_shares: Sequence[float] | None = None,
    alpha: float = DEFAULT_ALPHA,
    sizes: Sequence[int] = DEFAULT_SIZES,
    n_datasets: int = DEFAULT_DATASETS,
    seed: int = 0,
) -> dict:
    """The smallest items-per-annotator on ``sizes`` at which the alt-test passes with probability ≥ ``target``.

    Returns ``items_per_annotator`` (None when no size reaches the target), ``pass_rate`` per size tried
    (sizes are tried in order and the search stops at the first that reaches the target), and the
    assumptions in words.
    """
    if n_annotators < 2:
        raise ValueError("the alt-test needs at least two annotators (three are advised)")
    if categories < 2:
        raise ValueError("at least two categories")
    shares = np.full(categories, 1.0 / categories) if class_shares is None else np.asarray(class_shares, float)
    if shares.size != categories or not math.isclose(shares.sum(), 1.0) or (shares < 0).any():
        raise ValueError("class_shares must be one non-negative share per category, summing to 1")
    rng = np.random.default_rng(seed)
    accuracy = [annotator_accuracy] * n_annotators + [judge_accuracy]
    pass_rate: dict[int, float] = {}
    found = None
    for n in sorted(sizes):
        passes = 0
        for _ in range(n_datasets):
            _, labels = _simulate_labels(rng, n, n_annotators, accuracy, shares)
            passes += _passes(labels[:-1], labels[-1], epsilon, alpha)
        pass_rate[n] = passes / n_datasets
        if pass_rate[n] >= target:
            found = n
            break
    return {
        "items_per_annotator": found,
        "n_annotators": n_annotators,
        "pass_rate": pass_rate,
        "target": target,
        "epsilon": epsilon,
        "n_datasets": n_datasets,
        "assumptions": (
            f"simulated: {n_annotators} annotators each label every item; {categories} categories; each annotator "
            f"right with probability {annotator_accuracy:.2f}, the judge with {judge_accuracy:.2f}, a wrong label "
            f"drawn uniformly from the other categories; {n_datasets} data sets per size; BY at α = {alpha}"
        ),
    }


def kappa_half_width_plan(*, kappa: float, prevalence: float, half_width: float, confidence: float = 0.95) -> int:
    """Items for Cohen's κ (two raters, two classes, shared prevalence) to reach ``half_width`` at ``confidence``.

    Asymptotic: n = (z · σ₁ / h)², σ₁² the large-sample variance of κ times n (Fleiss, Cohen & Everitt
    1969) at the 2 × 2 table with both margins equal to ``prevalence`` and agreement giving ``kappa``.
    """
    if not 0.0 < prevalence < 1.0:
        raise ValueError("prevalence must lie in (0, 1)")
    if not 0.0 < half_width < 1.0:
        raise ValueError("half_width must lie in (0, 1)")
    p = prevalence
    chance = p * p + (1 - p) * (1 - p)
    observed = kappa * (1 - chance) + chance
    off = (1 - observed) / 2
    table = np.array([[p - off, off], [off, (1 - p) - off]])
    if (table < -1e-12).any() or not -1.0 <= kappa <= 1.0:
        raise ValueError(f"κ = {kappa} is not attainable with both raters at prevalence {prevalence}")
    rows, cols = table.sum(axis=1), table.sum(axis=0)
    diagonal = sum(table[i, i] * ((1 - chance) - (rows[i] + cols[i]) * (1 - observed)) ** 2 for i in range(2))
    off_diagonal = (1 - observed) ** 2 * sum(
        table[i, j] * (cols[i] + rows[j]) ** 2 for i in range(2) for j in range(2) if i != j
    )
    variance = (diagonal + off_diagonal - (observed * chance - 2 * chance + observed) ** 2) / (1 - chance) ** 4
    z = float(norm.ppf(0.5 + confidence / 2))
    return max(2, math.ceil((z * math.sqrt(max(variance, 0.0)) / half_width) ** 2))
