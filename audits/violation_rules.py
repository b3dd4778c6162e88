"""The named rules that turn one contrast cell into a violation flag, and the multiplicity-controlled flag.

Every result names the rule that flagged it (``ContrastResult.rule``; the methods box and every export
state the rule's text), so a reader can tell the paper's reproduction from the calibrated default:

* ``paper`` — EduFair-Bench's rule, kept so its tables can be reproduced: n >= min_pairs, the
  percentile bootstrap CI excludes 0, |r| >= threshold. At small n the percentile interval is narrower
  than the test, so it flags more than 5 % of null cells (7.1 % at n = 18; benchmarks/RESULTS.md).
* ``calibrated`` (the default) — the paper's three conditions *and* the signed-rank test's p < alpha,
  with the exact conditional p (``audits.exact_signed_rank``) up to 100 non-zero differences and the
  normal approximation above. Its null false-flag rate is at most that test's, which is exact at small n;
  the calibration benchmark measures it at n = 15 … 900.

The multiplicity-controlled flag (``violation_bh``) needs the Benjamini–Hochberg-adjusted p < fdr_q within
the cell's family (one contrast kind and family of one table, across tutors, domains and metrics) and
|r| >= threshold. Pure Python; no Django.
"""

from __future__ import annotations

import math
from typing import Literal

Rule = Literal["calibrated", "paper"]
RULES: tuple[str, ...] = ("calibrated", "paper")
DEFAULT_RULE: Rule = "calibrated"
RULE_CHOICES: tuple[tuple[str, str], ...] = (
    ("calibrated", "calibrated (default): paper's + signed-rank p < α"),
    ("paper", "paper (EduFair-Bench): CI excludes 0 and |r| ≥ threshold"),
)
# The defaults of the rules' parameters. To change one, change it here: AnalysisParameters
# (audits.analysis_parameters) takes its default from here, and the page's form, the API and audit_report's
# options, the statistics' keyword defaults and the design preview all read it from there.
# The |r| a cell must reach to be flagged, by every rule and by the BH flag (and the floor of the design
# preview's smallest detectable effect):
DEFAULT_THRESHOLD = 0.10
DEFAULT_ALPHA = 0.05  # the calibrated rule's signed-rank p < alpha
DEFAULT_FDR_Q = 0.05  # the Benjamini–Hochberg flag's level


def rule_text(rule: str, *, min_pairs: int, threshold: float, alpha: float) -> str:
    """The rule in words, for the methods box and the head of every export."""
    paper = f"n >= {min_pairs}, the percentile bootstrap CI excludes 0, and |r| >= {threshold:g}"
    if rule == "paper":
        return f"paper (EduFair-Bench): {paper}"
    return (
        f"calibrated: {paper}, and the Wilcoxon signed-rank p < {alpha:g} (exact given ties and zeros up to "
        "100 non-zero differences, normal approximation above)"
    )


def bh_text(*, fdr_q: float, threshold: float) -> str:
    return (
        f"Benjamini–Hochberg-adjusted p < {fdr_q:g} and |r| >= {threshold:g}; the family is one contrast kind and "
        "family (explicit vs control, explicit within, implicit names, opposite) of one table (judge-scored, "
        "conversation-level or student), across tutors, domains and metrics"
    )


def is_violation(
    rule: str,
    *,
    insufficient: bool,
    r: float,
    ci_low: float,
    ci_high: float,
    p_test: float,
    threshold: float,
    alpha: float,
) -> bool:
    if insufficient or math.isnan(r):
        return False
    paper = (ci_low > 0 or ci_high < 0) and abs(r) >= threshold
    if rule == "paper":
        return bool(paper)
    return bool(paper and p_test < alpha)


def is_bh_violation(*, insufficient: bool, r: float, p_adjusted: float, threshold: float, fdr_q: float) -> bool:
    if insufficient or math.isnan(r) or math.isnan(p_adjusted):
        return False
    return bool(p_adjusted < fdr_q and abs(r) >= threshold)
