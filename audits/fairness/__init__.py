"""Paired-contrast fairness statistics for EduFair audits: effect sizes, bootstrap CIs, violation flags, summaries.

The concepts live in submodules, in import order: ``frames`` (metric families, conditions, the score frame,
contrasts), ``signed_rank`` (the Wilcoxon kernel, r's ceiling), ``effect_table`` (table rows, BH, flags),
``bootstrap`` (the scipy-identical bootstrap), ``contrasts`` (paired_effect, a design's contrasts), ``cube``
(contrast_table), ``analysis`` (analyze) and ``summaries``; this package re-exports their public names.

Pure numpy / scipy / statsmodels (no Django), so a notebook can import it. It implements "The statistics,
precisely" of docs/ARCHITECTURE.md:

* ``paired_effect(a, b)`` — one contrast cell: Wilcoxon signed-rank on the paired differences ``b - a``
  (normal approximation with tie correction, no continuity correction), effect r = Z/sqrt(N) or the
  matched-pairs rank-biserial correlation, a paired percentile bootstrap CI over questions, and the
  violation / insufficient flags.
* ``contrast_table(scores, design)`` — every explicit, implicit and opposite contrast of an audit for
  every (tutor, domain, metric), vectorised: one resample-index matrix per (tutor, domain, contrast) is
  shared by all metrics, and the signed-rank statistic of all resamples is computed at once from the
  per-resample counts of each tie group of |differences|, so nothing loops over resamples in Python.
  Metrics with many distinct values (transcript-derived) are ranked on coarse groups first, which bounds
  every resample's effect, and computed exactly only for the resamples that can be an end of the CI.
  Benjamini–Hochberg-adjusted p-values are added per table family.
* summaries as in EduFair-Bench (domain × dimension cells of mean |r|, metric ×
  tutor, implicit name rows, opposite decomposition, tutor vs backbone), ``min_detectable_effect`` and
  ``dialogue_scores`` (per-turn judge values → one score per dialogue).

Exactness. The signed-rank sums are computed from counts, but with the same floating-point operations as
``scipy.stats.wilcoxon(..., method="asymptotic")`` (all intermediate values are exact integers or
half-integers), so |Z| and p are bit-identical to scipy's on the same rounded differences. The bootstrap
draws its index matrix exactly as ``scipy.stats.bootstrap(..., paired=True, rng=seed)`` does (the same
PCG64 words mapped the way ``Generator.integers`` maps them) and takes percentiles with the formula of
``scipy.stats.quantile``, so the CI is bit-identical to scipy's bootstrap with the same seed and statistic
(audits/tests/test_fairness_reference.py and benchmarks/fairness_scale.py check this). The mean
difference of a resample is an exact integer sum of the differences scaled by 10**round_decimals, divided
once: deterministic, and equal to np.mean's up to rounding (the benchmark compares its CI with
``scipy.stats.bootstrap`` of ``np.mean``).
"""

from __future__ import annotations

from audits.analysis_parameters import (
    ANALYSIS_DEFAULTS,
    ROUND_DECIMALS,
    AnalysisParameters,
    Effect,
    RDenominator,
    ZeroMethod,
)
from audits.exact_signed_rank import EXACT_MAX_NONZERO, signed_rank_exact_p
from audits.fairness.analysis import FairnessAnalysis, analyze
from audits.fairness.contrasts import build_contrasts, contrast_seed, paired_effect
from audits.fairness.cube import _contrast_tables as _contrast_tables
from audits.fairness.cube import cell_flagged, contrast_pairs, contrast_table
from audits.fairness.effect_table import (
    P_VALUE_NAMES,
    ContrastResult,
    ContrastTable,
    flagged_share,
    is_flagged,
    mark_simulator_driven,
)
from audits.fairness.frames import (
    CONVERSATION_METRICS,
    IMPLICIT_ROWS,
    KINDS,
    OPPOSITE_COMPONENTS,
    STUDENT_DEPENDENT_METRICS,
    STUDENT_METRICS,
    TURN_METRICS,
    ConditionSpec,
    Contrast,
    ScoreFrame,
    dialogue_scores,
)
from audits.fairness.resample_indices import bootstrap_indices
from audits.fairness.signed_rank import R_CEILING_TEXT, PairedEffect, min_detectable_effect, r_ceiling
from audits.fairness.summaries import (
    CHANGE_CI_METHOD,
    BackboneChange,
    SummaryCell,
    change_ci,
    dimension_cells,
    implicit_rows,
    metric_by_tutor,
    opposite_decomposition,
    tutor_vs_backbone,
)
from audits.violation_rules import DEFAULT_RULE, Rule, is_bh_violation, is_violation
from edufair_web.rubric_metrics import DEFAULT_RUBRIC_METRICS

__all__ = [
    "ANALYSIS_DEFAULTS",
    "AnalysisParameters",
    "BackboneChange",
    "CHANGE_CI_METHOD",
    "CONVERSATION_METRICS",
    "ConditionSpec",
    "Contrast",
    "ContrastResult",
    "ContrastTable",
    "DEFAULT_RUBRIC_METRICS",
    "DEFAULT_RULE",
    "EXACT_MAX_NONZERO",
    "Effect",
    "FairnessAnalysis",
    "IMPLICIT_ROWS",
    "KINDS",
    "OPPOSITE_COMPONENTS",
    "P_VALUE_NAMES",
    "PairedEffect",
    "RDenominator",
    "ROUND_DECIMALS",
    "R_CEILING_TEXT",
    "Rule",
    "STUDENT_DEPENDENT_METRICS",
    "STUDENT_METRICS",
    "ScoreFrame",
    "SummaryCell",
    "TURN_METRICS",
    "ZeroMethod",
    "analyze",
    "bootstrap_indices",
    "build_contrasts",
    "cell_flagged",
    "change_ci",
    "contrast_pairs",
    "contrast_seed",
    "contrast_table",
    "dialogue_scores",
    "dimension_cells",
    "flagged_share",
    "implicit_rows",
    "is_bh_violation",
    "is_flagged",
    "is_violation",
    "mark_simulator_driven",
    "metric_by_tutor",
    "min_detectable_effect",
    "opposite_decomposition",
    "paired_effect",
    "r_ceiling",
    "signed_rank_exact_p",
    "tutor_vs_backbone",
]
