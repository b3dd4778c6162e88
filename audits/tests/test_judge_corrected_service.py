"""The judge-corrected table of a finished audit, against planted human labels.

A judge-only flag the planted human labels do not support is listed first as "unsupported", the cells without
labels are counted as skipped, the sides are the turns of the side's conditions with the humans' labels, and an
audit without a validation project has no cell."""

from dataclasses import replace

import numpy as np
import pytest

from audits.judge_corrected import SideData, corrected_difference
from audits.models import TurnScore
from audits.services import judge_corrected
from audits.services.analysis import audit_analysis
from audits.services.judge_corrected import judge_corrected_results
from audits.tests.judge_corrected_audit import (
    HARSH_LEVEL,
    HARSH_METRIC,
    PARAMETERS,
    plant_subset,
    planted_audit,
    planted_subset,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def planted():
    return planted_audit()


def test_a_flag_the_humans_do_not_support_comes_first(planted, monkeypatch):
    audit, before = planted
    subset = planted_subset(audit, before)
    plant_subset(monkeypatch, subset)
    analysis = audit_analysis(audit=audit, parameters=PARAMETERS)
    results = judge_corrected_results(audit, analysis=analysis)

    assert results.subset is subset
    within = [c for c in results.cells if c.family == "within"]
    assert len(within) == 1
    cell = within[0]
    assert (cell.level_a, cell.level_b, cell.metric) == ("english_l1", HARSH_LEVEL, HARSH_METRIC)
    assert cell.judge_only_flag and cell.disagreement == "unsupported"
    assert cell.result.judge_only.excludes_zero and not cell.result.corrected.excludes_zero
    assert cell.badge == "flag not supported by humans" and "covers 0" in cell.reason
    # the judge errs on one side only: the cue check sees it
    assert cell.cue.cue_sensitive and cell.cue.mean_error_b < cell.cue.mean_error_a
    assert HARSH_METRIC in results.cue_sensitive_metrics
    # disagreeing cells first, then by |corrected difference|
    order = [(c.disagreement is None, -abs(c.result.corrected.estimate)) for c in results.cells]
    assert order == sorted(order)
    # one metric of five is labelled: 3 contrasts × 5 metrics, 3 cells computed, 12 skipped
    assert len(results.cells) == 3 and results.skipped == 12
    assert "PPI++" in results.methods and "inclusion probability" in results.methods


def test_a_side_is_every_scored_turn_of_its_conditions_and_its_labels(planted, monkeypatch):
    audit, before = planted
    subset = planted_subset(audit, before)
    plant_subset(monkeypatch, subset)
    results = judge_corrected_results(audit, analysis=audit_analysis(audit=audit, parameters=PARAMETERS))
    cell = next(c for c in results.cells if c.family == "within")

    def side(level: str) -> SideData:
        rows = list(
            TurnScore.objects.filter(
                turn__dialogue__audit=audit,
                turn__dialogue__condition__level=level,
                metric=HARSH_METRIC,
                value__gte=0,
            ).values_list("turn_id", "value")
        )
        labelled = [(subset.values[HARSH_METRIC][t], v) for t, v in rows if t in subset.values[HARSH_METRIC]]
        return SideData(
            judge_all=np.array([v for _, v in rows], dtype=float),
            human=np.array([h for (h, _), _ in labelled]),
            judge_labelled=np.array([v for _, v in labelled], dtype=float),
            inclusion_probability=np.array([p for (_, p), _ in labelled]),
        )

    expected = corrected_difference(side("english_l1"), side(HARSH_LEVEL))
    assert cell.result.corrected.estimate == pytest.approx(expected.corrected.estimate, abs=1e-12)
    assert cell.result.corrected.se == pytest.approx(expected.corrected.se, abs=1e-12)
    assert cell.result.side_b.n_labelled == expected.side_b.n_labelled > 2
    assert cell.result.side_a.n_turns == expected.side_a.n_turns


def test_without_a_validation_project_there_is_no_cell(planted, monkeypatch):
    audit, _ = planted
    plant_subset(monkeypatch, None)
    results = judge_corrected_results(audit, analysis=audit_analysis(audit=audit, parameters=PARAMETERS))
    assert results.subset is None and results.cells == [] and results.skipped == 15


def test_the_table_is_kept_until_a_human_label_or_the_scores_change(planted, monkeypatch):
    audit, before = planted
    subset = planted_subset(audit, before)
    plant_subset(monkeypatch, subset)
    analysis = audit_analysis(audit=audit, parameters=PARAMETERS)
    first = judge_corrected_results(audit, analysis=analysis)

    reads = []
    read_scores = judge_corrected.audit_turn_judge_scores
    monkeypatch.setattr(judge_corrected, "audit_turn_judge_scores", lambda a: reads.append(a.pk) or read_scores(a))
    again = judge_corrected_results(audit, analysis=analysis)  # the page, the report, an export
    assert reads == [] and [c.result for c in again.cells] == [c.result for c in first.cells]

    # One human label revised (same count, same time): a new table, computed afresh.
    turn, (value, probability) = next(iter(subset.values[HARSH_METRIC].items()))
    revised = {**subset.values[HARSH_METRIC], turn: (2.0 - value if value != 1.0 else 0.0, probability)}
    plant_subset(monkeypatch, replace(subset, values={HARSH_METRIC: revised}))
    changed = judge_corrected_results(audit, analysis=analysis)
    assert reads == [audit.pk] and changed.cells != first.cells

    # Another level is another table too.
    judge_corrected_results(audit, analysis=analysis, alpha=0.1)
    assert reads == [audit.pk, audit.pk]
