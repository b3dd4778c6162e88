"""The cue check of a judge validation's report: the contrasts where the judge errs differently per side.

Per metric, the audit's contrasts where the judge's error (judge − human consensus) differs between the two sides,
from the audit's judge-corrected contrasts (`audits.services.judge_corrected.judge_corrected_results`, reached
through `audit_source`; Welch's test at the table's α on each side's labelled turns).

A judge whose error depends on the student's cue manufactures or hides gaps even when it agrees with humans on
average; the judge-corrected contrasts correct for it, and this section names where it happens.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from annotation.judge_validation.audit_source import AnalysisState, analysis_request, judge_corrected_results


@dataclass(frozen=True)
class CueContrast:
    tutor: str
    domain: str
    kind: str
    dimension: str
    level_a: str
    level_b: str
    mean_error_a: float
    mean_error_b: float
    difference: float
    p_value: float
    n_labelled_a: int
    n_labelled_b: int


@dataclass(frozen=True)
class CueSection:
    """``available``: the audit's judge-corrected table rests on this project's labels. ``compared``: cells
    with ≥ 2 human labels on both sides, per metric; ``by_metric``: the cue-sensitive ones."""

    available: bool
    note: str
    alpha: float = 0.05
    compared: dict[str, int] = field(default_factory=dict)
    by_metric: dict[str, list[CueContrast]] = field(default_factory=dict)
    skipped: int = 0

    @property
    def per_metric(self) -> list[dict]:
        """Per compared metric, in the table's order: how many contrasts were compared and the cue-sensitive ones."""
        return [
            {"metric": metric, "compared": n, "contrasts": self.by_metric.get(metric, [])}
            for metric, n in self.compared.items()
        ]

    def as_dict(self) -> dict:
        return {
            "available": self.available,
            "note": self.note,
            "alpha": self.alpha,
            "compared": dict(self.compared),
            "skipped": self.skipped,
            "cue_sensitive": {
                metric: [contrast.__dict__.copy() for contrast in found] for metric, found in self.by_metric.items()
            },
        }


def cue_section(audit, project_id: int, *, alpha: float = 0.05) -> CueSection:
    """The cue check of the audit's judge on the contrasts its judge-corrected table compares, when that table
    rests on the labels of project ``project_id``. It reads the audit's analysis only when it is done (asking a
    worker for it otherwise, as the results page does), so the report page never computes one."""
    analysis = analysis_request(audit=audit)
    if isinstance(analysis, AnalysisState):
        waiting = "failed" if analysis.failed else f"is being computed ({analysis.percent} %)"
        return CueSection(
            available=False,
            note=f"The audit's analysis {waiting}; the cue check shows once it is ready.",
            alpha=alpha,
        )
    results = judge_corrected_results(audit, alpha=alpha, analysis=analysis)
    if results.subset is None:
        return CueSection(available=False, note="The audit has no judge-validation project.", alpha=alpha)
    if results.subset.project_id != project_id:
        return CueSection(
            available=False,
            note=(
                f"The audit's judge-corrected contrasts rest on another validation project, "
                f"#{results.subset.project_id} ({results.subset.project_name})."
            ),
            alpha=alpha,
        )
    compared: dict[str, int] = {}
    by_metric: dict[str, list[CueContrast]] = {}
    for cell in results.cells:
        compared[cell.metric] = compared.get(cell.metric, 0) + 1
        if not cell.cue.cue_sensitive:
            continue
        by_metric.setdefault(cell.metric, []).append(
            CueContrast(
                tutor=cell.tutor,
                domain=cell.domain,
                kind=cell.kind,
                dimension=cell.dimension,
                level_a=cell.level_a,
                level_b=cell.level_b,
                mean_error_a=cell.cue.mean_error_a,
                mean_error_b=cell.cue.mean_error_b,
                difference=cell.cue.difference,
                p_value=cell.cue.p_value,
                n_labelled_a=cell.result.side_a.n_labelled,
                n_labelled_b=cell.result.side_b.n_labelled,
            )
        )
    for found in by_metric.values():
        found.sort(key=lambda c: c.p_value)
    note = "" if results.cells else "No contrast has 2 human labels on both sides yet."
    return CueSection(
        available=True, note=note, alpha=alpha, compared=compared, by_metric=by_metric, skipped=results.skipped
    )
