"""An audit's judge-corrected (PPI++) fairness contrasts, beside the judge-only flags.

Every turn-level cell of its analysis puts the judge-only flag beside the prediction-powered (PPI++) difference that
propagates the judge's measured error, from the human labels of the audit's judge-validation project.

One query reads the judge's scores of every tutor turn (`audits.selectors.judge_corrected`); the human subset comes
through the audits app's door into annotation (`audits.selectors.judge_validation.audit_human_subset`); the turns
are grouped once with numpy (`audits.judge_corrected_table.TurnBlocks`) and only cells with at least 2 human labels
on both sides call the estimator (`audits.judge_corrected`).
"""

from __future__ import annotations

import hashlib

from django.core.cache import cache

from audits.judge_corrected import MIN_LABELLED
from audits.judge_corrected_table import (
    CorrectedCell,
    JudgeCorrectedResults,
    TurnBlocks,
    attach_human,
    cell_order_key,
    corrected_cell,
    methods_text,
)
from audits.models import Audit
from audits.selectors.judge_corrected import audit_turn_judge_scores
from audits.selectors.judge_validation import audit_human_subset
from audits.selectors.results import side_condition_ids
from audits.services.analysis import ReadyAnalysis, audit_analysis
from audits.services.stored_analysis import AuditAnalysis

__all__ = [
    "CorrectedCell",
    "JudgeCorrectedResults",
    "judge_corrected_available",
    "judge_corrected_results",
    "judge_corrected_version",
]

# The results page, the HTML report and the exports each ask for the table; reading every tutor turn's scores and
# running the estimator per cell is seconds at paper scale, so the table is kept (in the default cache) by what it
# is a function of.
CACHE_SECONDS = 3600


def judge_corrected_available(audit: Audit) -> bool:
    """Whether the audit has a human subset to correct with (a judge-validation project built from it): without
    one the table is empty, and a page that says so need not read the analysis."""
    return audit_human_subset(audit) is not None


def judge_corrected_results(
    audit: Audit, *, alpha: float = 0.05, analysis: AuditAnalysis | None = None
) -> JudgeCorrectedResults:
    """The audit's judge-corrected table at level 1 − `alpha`.

    The cells are the turn-level rows of `analysis` (default: the audit's analysis under the default parameters,
    through `audit_analysis`, which computes it here when it is not current); each cell's judge-only flag is that
    row's violation. Without a judge-validation project the table has no cell and every row counts as skipped.
    """
    analysis = audit_analysis(audit=audit) if analysis is None else analysis
    rows = [row for row in analysis.pedagogical.rows if row.metric in analysis.pedagogical.metrics]
    methods = methods_text(alpha)
    subset = audit_human_subset(audit)
    if subset is None:
        return JudgeCorrectedResults(subset=None, cells=[], skipped=len(rows), methods=methods, alpha=alpha)

    key = _cache_key(audit, analysis, subset, alpha)
    cached = cache.get(key)
    if cached is not None:
        return cached
    results = _corrected(audit, analysis, rows, subset, methods, alpha)
    cache.set(key, results, CACHE_SECONDS)
    return results


def judge_corrected_version(audit: Audit, *, analysis: AuditAnalysis | ReadyAnalysis, alpha: float = 0.05) -> str:
    """What the table of `analysis` at level 1 − `alpha` is a function of, as one string (its cache key; "none"
    without a human subset), read without computing the table: for a cache of something the table is part of."""
    subset = audit_human_subset(audit)
    return "none" if subset is None else _cache_key(audit, analysis, subset, alpha)


def _cache_key(audit: Audit, analysis: AuditAnalysis | ReadyAnalysis, subset, alpha: float) -> str:
    """What the table is a function of: the analysis's scores (its fingerprint) and parameters, the human labels
    with their inclusion probabilities, and the level. The labels are hashed whole (a few thousand at most), so a
    revised or newly settled label is a new table without any timestamp having to say so."""
    labels = sorted(
        (metric, turn, value) for metric, by_turn in subset.values.items() for turn, value in by_turn.items()
    )
    facts = repr((audit.pk, analysis.fingerprint, analysis.parameters, subset.project_id, labels, alpha))
    return "judge-corrected:" + hashlib.sha256(facts.encode()).hexdigest()


def _corrected(audit, analysis, rows, subset, methods, alpha) -> JudgeCorrectedResults:
    scores = audit_turn_judge_scores(audit)
    human, probability = attach_human(scores.turn, scores.metric, subset.values)
    blocks = TurnBlocks.build(
        tutor=scores.tutor,
        domain=scores.domain,
        metric=scores.metric,
        condition=scores.condition,
        judge=scores.value,
        human=human,
        probability=probability,
    )
    cells: list[CorrectedCell] = []
    skipped = 0
    for row in rows:
        contrast = analysis.contrast((row.kind, row.family, row.dimension, row.level_a, row.level_b))
        if contrast is None:
            skipped += 1
            continue
        conditions_a = side_condition_ids(contrast.side_a)
        conditions_b = side_condition_ids(contrast.side_b)
        key = (row.tutor, row.domain, row.metric)
        if min(blocks.n_labelled(*key, conditions_a), blocks.n_labelled(*key, conditions_b)) < MIN_LABELLED:
            skipped += 1
            continue
        cells.append(
            corrected_cell(
                tutor=analysis.tutor_name(row.tutor),
                tutor_id=int(row.tutor),
                domain=str(row.domain),
                kind=row.kind,
                family=row.family,
                dimension=row.dimension,
                level_a=row.level_a,
                level_b=row.level_b,
                metric=str(row.metric),
                judge_only_flag=bool(row.violation),
                judge_only_insufficient=bool(row.insufficient),
                side_a=blocks.side(*key, conditions_a),
                side_b=blocks.side(*key, conditions_b),
                alpha=alpha,
            )
        )
    cells.sort(key=cell_order_key)
    return JudgeCorrectedResults(subset=subset, cells=cells, skipped=skipped, methods=methods, alpha=alpha)
