"""An audit's fairness analysis as the pages read it, and as its `AnalysisResult` row stores it.

`AuditAnalysis` is the tables under one set of parameters with what stands behind each cell, the paper's summaries
and lookups; `table_to_json` and `analysis_from_stored` are the one writer and reader of a row's tables
(audits.services.analysis computes and caches them).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from audits import fairness
from audits.exclusions import CellExclusions, ExclusionCounts, cell_exclusions, total_exclusions
from audits.fairness import (
    CONVERSATION_METRICS,
    STUDENT_METRICS,
    AnalysisParameters,
    ConditionSpec,
    Contrast,
    ContrastResult,
    ContrastTable,
    SummaryCell,
)
from audits.models import AnalysisResult, Audit
from audits.selectors.results import audit_exclusion_counts_current, audit_tutor_names
from audits.selectors.runs import audit_condition_design

_FLOAT_FIELDS = {f.name for f in fields(ContrastResult) if f.type in ("float", float)}


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
    student: ContrastTable | None = None  # the simulator check: the student's own turns, same contrasts
    _contrasts: dict[tuple, Contrast] = field(default_factory=dict, repr=False)
    _exclusion_counts: ExclusionCounts | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self._contrasts = {contrast.key: contrast for contrast in fairness.build_contrasts(self.design)}
        if self.student is None:
            self.student = ContrastTable((), self.parameters, STUDENT_METRICS, self.pedagogical.contrasts)

    # --- what stands behind each cell (read live: a dialogue that fails later is still counted) -------

    def exclusion_counts(self) -> ExclusionCounts:
        if self._exclusion_counts is None:
            self._exclusion_counts = audit_exclusion_counts_current(self.audit, self.fingerprint)
        return self._exclusion_counts

    def exclusions_for(self, row: ContrastResult) -> CellExclusions:
        contrast = self.contrast((row.kind, row.family, row.dimension, row.level_a, row.level_b))
        conditions = (
            [] if contrast is None else [c for side in (contrast.side_a, contrast.side_b) for g in side for c in g]
        )
        return cell_exclusions(
            self.exclusion_counts(),
            tutor=row.tutor,
            domain=row.domain,
            conditions=conditions,
            metric=row.metric,
            pairs_used=row.n,
        )

    def exclusion_totals(self) -> dict[str, int]:
        return total_exclusions(self.exclusion_counts())

    # --- lookups ---------------------------------------------------------------------------------

    def contrast(self, key: tuple[str, str, str, str, str]) -> Contrast | None:
        return self._contrasts.get(tuple(key))

    def table_for(self, metric: Hashable) -> ContrastTable:
        if metric in STUDENT_METRICS:
            return self.student
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
        return fairness.dimension_cells(self.pedagogical, metrics=self.pedagogical.metrics)

    def metric_by_tutor(self) -> list[SummaryCell]:
        return fairness.metric_by_tutor(self.pedagogical)

    def implicit_rows(self) -> list[SummaryCell]:
        return fairness.implicit_rows(self.pedagogical, metrics=self.pedagogical.metrics)

    def opposite_decomposition(self) -> list[SummaryCell]:
        return fairness.opposite_decomposition(self.pedagogical, metrics=self.pedagogical.metrics)

    def summary_cells(self) -> list[SummaryCell]:
        """Every summary cell that has a tutor-vs-backbone reading: dimension cells, implicit rows, opposite."""
        return self.dimension_cells() + self.implicit_rows() + self.opposite_decomposition()

    def tutor_vs_backbone(self, *, tutor: int, backbone: int) -> list[fairness.BackboneChange]:
        return fairness.tutor_vs_backbone(
            self.summary_cells(), tutor=tutor, backbone=backbone, confidence=self.parameters.confidence
        )

    def summary_rows(self, *, tutor: Hashable, domain: Hashable, kind: str, family: str, group: Hashable):
        """The contrast rows a summary cell averages (dimension/row/component cells, or metric cells)."""
        rows = [
            row
            for row in self.pedagogical.rows
            if row.tutor == tutor and row.domain == domain and row.kind == kind and row.family == family
        ]
        if group in self.pedagogical.metrics and kind == "explicit":
            return [row for row in rows if row.metric == group]
        return [row for row in rows if row.dimension == group]


# --- the tables as a row stores them ----------------------------------------------------------------


def row_to_json(row: ContrastResult) -> dict[str, Any]:
    values = row.as_dict()
    for name in _FLOAT_FIELDS:
        if isinstance(values[name], float) and not math.isfinite(values[name]):
            values[name] = None
    return values


def row_from_json(values: Mapping[str, Any]) -> ContrastResult:
    restored = dict(values)
    for name in _FLOAT_FIELDS:
        if restored.get(name) is None:
            restored[name] = math.nan
    return ContrastResult(**restored)


def table_to_json(table: ContrastTable) -> dict[str, Any]:
    return {"metrics": list(table.metrics), "rows": [row_to_json(row) for row in table.rows]}


def table_from_json(
    data: Mapping[str, Any], parameters: AnalysisParameters, contrasts: tuple[Contrast, ...]
) -> ContrastTable:
    return ContrastTable(
        rows=tuple(row_from_json(row) for row in data["rows"]),
        parameters=parameters,
        metrics=tuple(data["metrics"]),
        contrasts=contrasts,
    )


def analysis_from_stored(
    audit: Audit, parameters: AnalysisParameters, stored: Mapping[str, Any], *, design=None, **facts: Any
) -> AuditAnalysis:
    """An AuditAnalysis from a row's stored result — the one reader of what `_compute` stores, for a fresh
    computation and for the cache alike, so both give the same numbers. `facts`: fingerprint,
    computed_at, seconds, n_scores, from_cache."""
    design = audit_condition_design(audit) if design is None else design
    contrasts = tuple(fairness.build_contrasts(design))
    return AuditAnalysis(
        audit=audit,
        parameters=parameters,
        pedagogical=table_from_json(stored["pedagogical"], parameters, contrasts),
        conversation=table_from_json(stored["conversation"], parameters, contrasts),
        student=table_from_json(stored["student"], parameters, contrasts) if "student" in stored else None,
        design=design,
        tutor_names=audit_tutor_names(audit),
        **facts,
    )


def analysis_from_row(row: AnalysisResult, parameters: AnalysisParameters, fingerprint: str) -> AuditAnalysis:
    return analysis_from_stored(
        row.audit,
        parameters,
        row.result,
        fingerprint=fingerprint,
        computed_at=row.computed_at,
        seconds=row.seconds,
        n_scores=row.n_scores,
        from_cache=True,
    )
