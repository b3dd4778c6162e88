"""Which numbers rest on a metric whose judge failed validation, and the mark that says so.

Pure (no Django): the heatmaps, the results pages and the exports mark the same metrics the same way.
"""

from __future__ import annotations

from collections.abc import Collection, Hashable, Sequence

from audits.fairness import TURN_METRICS

# The mark on a metric whose judge failed validation (its labels, and every number resting on it): one
# character, the same on the pages, in the HTML report and in the SVG, explained by a legend line.
JUDGE_FAILED_MARK = "†"
JUDGE_FAILED_TEXT = "judge failed validation"


def judge_failed_among(metrics: Sequence[Hashable], failed: Collection[str]) -> tuple[str, ...]:
    """Those of ``metrics`` whose judge failed validation, in the given order."""
    return tuple(str(metric) for metric in metrics if str(metric) in failed)


def summary_cell_metrics(cell, metrics: Sequence[Hashable] = TURN_METRICS) -> tuple[Hashable, ...]:
    """The metrics a summary cell's value rests on (a `SummaryCell` or `BackboneChange`): its own metric
    for a metric × tutor cell, else every one of ``metrics`` (the pedagogical table's, its rubric's turn-level
    metrics) — pedagogical |r| averages them. The same rule `AuditAnalysis.summary_rows` uses to find a cell's rows."""
    if cell.kind == "explicit" and cell.group in metrics:
        return (cell.group,)
    return tuple(metrics)


def metric_label(metric: Hashable, failed: Collection[str]) -> str:
    """A metric's name as a heading, with the mark when its judge failed validation."""
    return f"{metric} {JUDGE_FAILED_MARK}" if str(metric) in failed else str(metric)
