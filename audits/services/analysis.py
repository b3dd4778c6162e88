"""Turn an audit into fairness results: build the score frame and design from the database, run
`audits.fairness.analyze`, and cache the result per (audit, parameters) until the scores change.

`audit_analysis(audit=..., parameters=...)` is the one door the results pages, the API, the exports and
`manage.py audit_report` go through, so they always show the same numbers.
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from audits import fairness
from audits.fairness import (
    CONVERSATION_METRICS,
    TURN_METRICS,
    AnalysisParameters,
    ConditionSpec,
    Contrast,
    ContrastResult,
    ContrastTable,
    SummaryCell,
)
from audits.models import AnalysisResult, Audit
from audits.selectors.results import audit_analysis_inputs, audit_tutor_names, scores_fingerprint

# Bump when the statistics or the stored layout change, so older cached rows are recomputed.
ANALYSIS_VERSION = 1

_FLOAT_FIELDS = {f.name for f in fields(ContrastResult) if f.type in ("float", float)}


def parameters_hash(parameters: AnalysisParameters) -> str:
    payload = json.dumps({"version": ANALYSIS_VERSION, **parameters.as_dict()}, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()


@dataclass
class AuditAnalysis:
    """An audit's two contrast tables under one set of parameters, with what the pages need around them."""

    audit: Audit
    parameters: AnalysisParameters
    pedagogical: ContrastTable
    conversation: ContrastTable
    design: dict[int, ConditionSpec]
    tutor_names: dict[int, str]
    fingerprint: str
    computed_at: Any
    seconds: float
    n_scores: int
    from_cache: bool
    _contrasts: dict[tuple, Contrast] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self._contrasts = {contrast.key: contrast for contrast in fairness.build_contrasts(self.design)}

    # --- lookups ---------------------------------------------------------------------------------

    def contrast(self, key: tuple[str, str, str, str, str]) -> Contrast | None:
        return self._contrasts.get(tuple(key))

    def table_for(self, metric: Hashable) -> ContrastTable:
        return self.conversation if metric in CONVERSATION_METRICS else self.pedagogical

    def tutor_name(self, tutor: Hashable) -> str:
        return self.tutor_names.get(tutor, str(tutor))

    @property
    def tutors(self) -> list[int]:
        present = {row.tutor for row in self.pedagogical.rows} | {row.tutor for row in self.conversation.rows}
        return [t for t in self.tutor_names if t in present]

    @property
    def domains(self) -> list[str]:
        return sorted({row.domain for row in self.pedagogical.rows} | {row.domain for row in self.conversation.rows})

    # --- the paper's summaries -------------------------------------------------------------------

    def dimension_cells(self) -> list[SummaryCell]:
        return fairness.dimension_cells(self.pedagogical)

    def threshold_counts(self) -> list[fairness.ThresholdCount]:
        return fairness.cells_over_threshold(self.dimension_cells())

    def metric_by_tutor(self) -> list[SummaryCell]:
        return fairness.metric_by_tutor(self.pedagogical)

    def implicit_rows(self) -> list[SummaryCell]:
        return fairness.implicit_rows(self.pedagogical)

    def opposite_decomposition(self) -> list[SummaryCell]:
        return fairness.opposite_decomposition(self.pedagogical)

    def summary_cells(self) -> list[SummaryCell]:
        """Every summary cell that has a tutor-vs-backbone reading: dimension cells, implicit rows, opposite."""
        return self.dimension_cells() + self.implicit_rows() + self.opposite_decomposition()

    def tutor_vs_backbone(self, *, tutor: int, backbone: int) -> list[fairness.BackboneChange]:
        return fairness.tutor_vs_backbone(self.summary_cells(), tutor=tutor, backbone=backbone)

    def summary_rows(self, *, tutor: Hashable, domain: Hashable, kind: str, family: str, group: Hashable):
        """The contrast rows a summary cell averages (dimension/row/component cells, or metric cells)."""
        rows = [
            row
            for row in self.pedagogical.rows
            if row.tutor == tutor and row.domain == domain and row.kind == kind and row.family == family
        ]
        if group in TURN_METRICS and kind == "explicit":
            return [row for row in rows if row.metric == group]
        return [row for row in rows if row.dimension == group]


# --- (de)serialising the tables ------------------------------------------------------------------


def _row_to_json(row: ContrastResult) -> dict[str, Any]:
    values = row.as_dict()
    for name in _FLOAT_FIELDS:
        if isinstance(values[name], float) and not math.isfinite(values[name]):
            values[name] = None
    return values


def _row_from_json(values: Mapping[str, Any]) -> ContrastResult:
    restored = dict(values)
    for name in _FLOAT_FIELDS:
        if restored.get(name) is None:
            restored[name] = math.nan
    return ContrastResult(**restored)


def _table_to_json(table: ContrastTable) -> dict[str, Any]:
    return {"metrics": list(table.metrics), "rows": [_row_to_json(row) for row in table.rows]}


def _table_from_json(
    data: Mapping[str, Any], parameters: AnalysisParameters, contrasts: tuple[Contrast, ...]
) -> ContrastTable:
    return ContrastTable(
        rows=tuple(_row_from_json(row) for row in data["rows"]),
        parameters=parameters,
        metrics=tuple(data["metrics"]),
        contrasts=contrasts,
    )


# --- the service ---------------------------------------------------------------------------------


def audit_analysis(*, audit: Audit, parameters: AnalysisParameters | None = None) -> AuditAnalysis:
    """The audit's fairness analysis under `parameters` (defaults: r, Pratt, B = 2,000, seed 0,
    threshold 0.10, 15 pairs): from the cache when the audit's scores are unchanged, else computed
    now and stored."""
    parameters = parameters or AnalysisParameters()
    key = parameters_hash(parameters)
    fingerprint = scores_fingerprint(audit)
    tutor_names = audit_tutor_names(audit)
    cached = AnalysisResult.objects.filter(audit=audit, parameters_hash=key, scores_fingerprint=fingerprint).first()
    if cached is not None:
        from audits.selectors.runs import audit_condition_design

        design = audit_condition_design(audit)
        contrasts = tuple(fairness.build_contrasts(design))
        return AuditAnalysis(
            audit=audit,
            parameters=parameters,
            pedagogical=_table_from_json(cached.result["pedagogical"], parameters, contrasts),
            conversation=_table_from_json(cached.result["conversation"], parameters, contrasts),
            design=design,
            tutor_names=tutor_names,
            fingerprint=fingerprint,
            computed_at=cached.computed_at,
            seconds=cached.seconds,
            n_scores=cached.n_scores,
            from_cache=True,
        )

    started = time.perf_counter()
    inputs = audit_analysis_inputs(audit)
    options = {
        "effect": parameters.effect,
        "zero_method": parameters.zero_method,
        "r_denominator": parameters.r_denominator,
        "n_boot": parameters.n_boot,
        "seed": parameters.seed,
        "threshold": parameters.threshold,
        "min_pairs": parameters.min_pairs,
        "confidence": parameters.confidence,
    }
    if len(inputs.scores):
        result = fairness.analyze(inputs.scores, inputs.design, **options)
        pedagogical, conversation = result.pedagogical, result.conversation
    else:
        contrasts = tuple(fairness.build_contrasts(inputs.design))
        pedagogical = ContrastTable((), parameters, TURN_METRICS, contrasts)
        conversation = ContrastTable((), parameters, CONVERSATION_METRICS, contrasts)
    seconds = time.perf_counter() - started
    stored = {"pedagogical": _table_to_json(pedagogical), "conversation": _table_to_json(conversation)}
    defaults = {
        "parameters": parameters.as_dict(),
        "scores_fingerprint": fingerprint,
        "result": stored,
        "n_scores": len(inputs.scores),
        "seconds": seconds,
    }
    try:
        with transaction.atomic():
            row, _ = AnalysisResult.objects.update_or_create(audit=audit, parameters_hash=key, defaults=defaults)
    except IntegrityError:
        # Another request stored the same analysis a moment ago; ours is identical, keep theirs.
        row = AnalysisResult.objects.get(audit=audit, parameters_hash=key)
    return AuditAnalysis(
        audit=audit,
        parameters=parameters,
        pedagogical=pedagogical,
        conversation=conversation,
        design=inputs.design,
        tutor_names=tutor_names,
        fingerprint=fingerprint,
        computed_at=row.computed_at or timezone.now(),
        seconds=seconds,
        n_scores=len(inputs.scores),
        from_cache=False,
    )


def cached_analysis(*, audit: Audit, parameters: AnalysisParameters | None = None) -> AnalysisResult | None:
    """The stored analysis row if it is current (for the dashboard, which never computes)."""
    parameters = parameters or AnalysisParameters()
    return AnalysisResult.objects.filter(
        audit=audit, parameters_hash=parameters_hash(parameters), scores_fingerprint=scores_fingerprint(audit)
    ).first()
