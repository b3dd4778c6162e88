"""The whole fairness analysis of an audit: pedagogical, conversation and simulator-check tables."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

from audits.analysis_parameters import ANALYSIS_DEFAULTS, AnalysisParameters
from audits.fairness.contrasts import build_contrasts
from audits.fairness.cube import _contrast_tables, _frame_codes
from audits.fairness.effect_table import ContrastTable, mark_simulator_driven
from audits.fairness.frames import CONVERSATION_METRICS, STUDENT_METRICS, TURN_METRICS, ConditionSpec, ScoreFrame

# --------------------------------------------------------------------------------------------------
# The whole analysis
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FairnessAnalysis:
    """The judge-scored (pedagogical) table, the transcript-derived (conversation-level) table and the
    simulator check (the student's own turns under the same contrasts)."""

    pedagogical: ContrastTable
    conversation: ContrastTable
    student: ContrastTable


def analyze(
    scores: ScoreFrame,
    design: Mapping[Hashable, ConditionSpec],
    *,
    turn_metrics: Sequence[Hashable] = TURN_METRICS,
    conversation_metrics: Sequence[Hashable] = CONVERSATION_METRICS,
    student_metrics: Sequence[Hashable] = STUDENT_METRICS,
    parameters: AnalysisParameters = ANALYSIS_DEFAULTS,
    progress: Callable[[int, int], None] | None = None,
    **options: Any,
) -> FairnessAnalysis:
    """The three tables of an audit with the same ``parameters``, the conversation table marked by the
    simulator check (``mark_simulator_driven``). ``options`` go to ``contrast_table``: its other keywords
    (``tutor_identity``, ``level_order``, …) and fields of ``parameters`` changed by name.

    ``progress(cells_done, cells_total)`` counts the cells of all three tables.
    """
    metric_sets = (tuple(turn_metrics), tuple(conversation_metrics), tuple(student_metrics))
    present = set(_frame_codes(scores)["metric"][0].tolist())  # factorised once, reused by the tables
    wanted = [metrics for metrics in metric_sets if present & set(metrics)]
    names = {f.name for f in fields(AnalysisParameters)}
    parameters = parameters.replaced(**{name: value for name, value in options.items() if name in names})
    options = {name: value for name, value in options.items() if name not in names}
    # One pass over the tables that have scores: resamples shared by their sets are drawn once.
    computed = iter(
        _contrast_tables(scores, design, metric_sets=wanted, parameters=parameters, progress=progress, **options)
        if wanted
        else []
    )
    contrasts = tuple(build_contrasts(design, level_order=options.get("level_order")))
    tables = [
        next(computed) if metrics in wanted else ContrastTable((), parameters, metrics, contrasts)
        for metrics in metric_sets
    ]
    pedagogical, conversation, student = tables
    return FairnessAnalysis(
        pedagogical=pedagogical, conversation=mark_simulator_driven(conversation, student), student=student
    )
