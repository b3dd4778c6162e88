"""The Alternative Annotator Test: can the judge replace the human annotators? — pure, no Django.

The procedure of Calderon, Reichart & Dror (ACL 2025, "The Alternative Annotator Test for LLM-as-a-Judge:
How to Statistically Justify Replacing Human Annotators with LLMs"):

1. For each annotator j, take the items j labelled that at least one other annotator labelled and the judge
   scored. On each item, the alignment of a label with the OTHER annotators (leave j out) is the share of
   them it equals (categorical) or minus the root-mean-square difference from their values (numeric).
2. Per item, W_judge = 1 when the judge's alignment ≥ j's, and W_human = 1 when j's ≥ the judge's (a tie
   gives both 1). ρ_j = mean W_judge, the judge's advantage probability against j.
3. H0: P(human better) − P(judge better) ≥ ε, against H1: < ε, by a one-sided one-sample t-test of the
   per-item differences W_human − W_judge against ε (the paired t-test of the paper).
4. The annotators' p-values are adjusted by Benjamini–Yekutieli (statsmodels ``fdr_by``) at ``alpha``; the
   winning rate ω = share of tested annotators whose null is rejected; the judge passes when ω ≥ 0.5.
   ρ = mean of ρ_j over the tested annotators ranks judges (higher is better).

The requirements the authors state — at least three annotators, and enough items per annotator for the
t-test (they advise ≥ 30) — are checked and, when unmet, returned as sentences in ``unmet`` and the judge
does not pass; they never raise. An annotator with too few items is left out of the test (and named); ω and
ρ are then over the annotators tested. When every difference is the same, the p-value is the t-test's limit
(0 below ε, else 1).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import asdict, dataclass, field
from typing import Literal

import numpy as np
from scipy.stats import ttest_1samp
from statsmodels.stats.multitest import multipletests

EPSILON_EXPERT = 0.2
"""ε for expert annotators (reliable but expensive): the authors' advice. They advise 0.15 for skilled
annotators (students, trained workers) and 0.1 for crowd workers, and a smaller ε when the annotators' own
agreement is low."""
EPSILON_CROWD = 0.1
"""ε for crowd workers, as the authors advise (see `EPSILON_EXPERT`)."""
DEFAULT_ALPHA = 0.05
DEFAULT_MIN_ITEMS = 30  # the authors: at least 30 items per annotator for the t-test's normality
DEFAULT_MIN_ANNOTATORS = 3
PASS_WINNING_RATE = 0.5

Kind = Literal["categorical", "numeric"]


@dataclass(frozen=True)
class AltTestResult:
    """The alt-test's outcome. ``omega``/``rho`` are None when no annotator could be tested."""

    omega: float | None
    rho: float | None
    passed: bool
    epsilon: float
    alpha: float
    per_annotator: list[dict] = field(default_factory=list)
    unmet: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return asdict(self)


def _present(value: object) -> bool:
    return value is not None and value == value  # NaN is not equal to itself


def alignment(value: object, others: list, kind: Kind) -> float:
    """How well ``value`` represents ``others``: share equal (categorical) or −RMSE (numeric)."""
    if kind == "categorical":
        return sum(value == other for other in others) / len(others)
    diffs = np.asarray(others, dtype=float) - float(value)
    return -math.sqrt(float(np.mean(diffs**2)))


def one_sided_p(differences: np.ndarray, epsilon: float) -> float:
    """p of H0: mean(differences) ≥ ε against H1: < ε (scipy's one-sample t-test, one-sided).

    When every difference is the same the t statistic is ±∞ or undefined; the p-value is then its limit:
    0 when the common difference is below ε, else 1.
    """
    differences = np.asarray(differences, dtype=float)
    if np.all(differences == differences[0]):
        return 0.0 if differences[0] < epsilon else 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # near-constant data: scipy warns of precision loss
        p = float(ttest_1samp(differences, epsilon, alternative="less").pvalue)
    return p if math.isfinite(p) else 1.0


def alt_test(
    human: dict[str, dict[str, object]],
    judge: dict[str, object],
    *,
    epsilon: float = EPSILON_EXPERT,
    alpha: float = DEFAULT_ALPHA,
    kind: Kind = "categorical",
    min_items: int = DEFAULT_MIN_ITEMS,
    min_annotators: int = DEFAULT_MIN_ANNOTATORS,
) -> AltTestResult:
    """Run the alt-test of ``judge`` (item → label) against ``human`` (annotator → item → label).

    Missing labels (None/NaN) count as not given. See the module docstring for the procedure.
    """
    if kind not in ("categorical", "numeric"):
        raise ValueError(f"kind must be 'categorical' or 'numeric', got {kind!r}")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha}")
    labels = {a: {i: v for i, v in items.items() if _present(v)} for a, items in human.items()}
    scored = {i for i, v in judge.items() if _present(v)}
    unmet: list[str] = []
    if len(labels) < min_annotators:
        unmet.append(f"the alt-test needs at least {min_annotators} annotators; {len(labels)} labelled this metric")

    rows: list[dict] = []
    for annotator in sorted(labels, key=str):
        items = [
            i
            for i in sorted(labels[annotator], key=str)
            if i in scored and any(i in labels[o] for o in labels if o != annotator)
        ]
        if len(items) < min_items:
            unmet.append(
                f"annotator {annotator} has {len(items)} items also labelled by another annotator and scored "
                f"by the judge; the alt-test needs at least {min_items}, so {annotator} is not tested"
            )
            continue
        judge_wins, human_wins, judge_align, human_align = [], [], [], []
        for i in items:
            others = [labels[o][i] for o in sorted(labels, key=str) if o != annotator and i in labels[o]]
            s_judge = alignment(judge[i], others, kind)
            s_human = alignment(labels[annotator][i], others, kind)
            judge_align.append(s_judge)
            human_align.append(s_human)
            judge_wins.append(1.0 if s_judge >= s_human else 0.0)
            human_wins.append(1.0 if s_human >= s_judge else 0.0)
        diff = np.asarray(human_wins) - np.asarray(judge_wins)
        rows.append(
            {
                "annotator": annotator,
                "n_items": len(items),
                "judge_align": float(np.mean(judge_align)),
                "human_align": float(np.mean(human_align)),
                "advantage": float(np.mean(judge_wins)),
                "p_value": one_sided_p(diff, epsilon),
            }
        )

    if not rows:
        if not unmet:
            unmet.append("no annotator could be tested")
        return AltTestResult(None, None, False, epsilon, alpha, [], unmet)
    if len(rows) < min_annotators and len(labels) >= min_annotators:
        unmet.append(f"only {len(rows)} annotators could be tested; the alt-test needs at least {min_annotators}")
    rejected, adjusted, _, _ = multipletests([row["p_value"] for row in rows], alpha=alpha, method="fdr_by")
    for row, p_adj, reject in zip(rows, adjusted, rejected, strict=True):
        row["p_adjusted"] = float(p_adj)
        row["rejected"] = bool(reject)
    omega = float(np.mean(rejected))
    rho = float(np.mean([row["advantage"] for row in rows]))
    return AltTestResult(
        omega=omega,
        rho=rho,
        passed=omega >= PASS_WINNING_RATE and not unmet,
        epsilon=epsilon,
        alpha=alpha,
        per_annotator=rows,
        unmet=unmet,
    )
