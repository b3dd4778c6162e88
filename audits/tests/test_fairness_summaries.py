"""Summary tables: domain × dimension cells, metric × tutor, implicit rows, tutor vs backbone."""

import math

import pytest

from audits.fairness import (
    TURN_METRICS,
    AnalysisParameters,
    ContrastResult,
    ContrastTable,
    dimension_cells,
    flagged_share,
    implicit_rows,
    is_flagged,
    metric_by_tutor,
    tutor_vs_backbone,
)


def row(tutor, domain, dimension, metric, r, *, kind="explicit", family="within", insufficient=False, violation=False):
    return ContrastResult(
        tutor=tutor, domain=domain, kind=kind, family=family, dimension=dimension, level_a="a", level_b="b",
        metric=metric, n_questions=100, n=100, n_nonzero=80, r=r, z=0.0, p=0.5, p_adjusted=0.5, ci_low=-1.0,
        ci_high=1.0, violation=violation, insufficient=insufficient, n_boot_degenerate=0, seed=0,
    )  # fmt: skip


def table_of(rows):
    return ContrastTable(rows=tuple(rows), parameters=AnalysisParameters(), metrics=TURN_METRICS, contrasts=())


def test_dimension_cell_is_mean_absolute_r_over_five_metrics():
    rs = [0.1, -0.2, 0.3, -0.05, 0.05]
    table = table_of([row("qwen", "maths", "first_language", m, r) for m, r in zip(TURN_METRICS, rs, strict=True)])
    (cell,) = dimension_cells(table)
    assert cell.value == pytest.approx(0.14)
    assert cell.over_threshold and cell.n_rows == 5


def test_insufficient_rows_are_left_out_and_an_all_insufficient_cell_is_nan():
    rows = [row("qwen", "maths", "ses", m, 0.5, insufficient=True) for m in TURN_METRICS]
    rows += [row("qwen", "physics", "ses", TURN_METRICS[0], 0.5, insufficient=True)]
    rows += [row("qwen", "physics", "ses", TURN_METRICS[1], 0.02)]
    cells = {c.domain: c for c in dimension_cells(table_of(rows))}
    assert math.isnan(cells["maths"].value) and not cells["maths"].over_threshold
    assert cells["physics"].value == pytest.approx(0.02) and cells["physics"].n_insufficient == 1


def test_metric_by_tutor_averages_over_dimensions():
    rows = [row("qwen", "maths", "gender", "actionability", 0.1), row("qwen", "maths", "ses", "actionability", -0.3)]
    (cell,) = metric_by_tutor(table_of(rows))
    assert cell.group == "actionability" and cell.value == pytest.approx(0.2)


def test_implicit_rows():
    rows = [row("llama", "physics", "both", m, 0.2, kind="implicit", family="names") for m in TURN_METRICS]
    rows += [row("llama", "physics", "gender", m, 0.1, kind="implicit", family="names") for m in TURN_METRICS]
    values = {c.group: c.value for c in implicit_rows(table_of(rows))}
    assert values == pytest.approx({"both": 0.2, "gender": 0.1})


def test_tutor_vs_backbone_reports_both_and_the_change():
    rows = [row("qwen", "chemistry", "first_language", m, 0.114) for m in TURN_METRICS]
    rows += [row("tutorrl", "chemistry", "first_language", m, -0.177) for m in TURN_METRICS]
    (change,) = tutor_vs_backbone(dimension_cells(table_of(rows)), tutor="tutorrl", backbone="qwen")
    assert (change.backbone_value, change.tutor_value) == pytest.approx((0.114, 0.177))
    assert change.change == pytest.approx(0.063)


def test_flag_helpers_for_calibration():
    rows = [row("qwen", "maths", "gender", "actionability", 0.3, violation=True)]
    rows += [row("qwen", "maths", "gender", "corrective_tone", 0.0), row("qwen", "maths", "ses", "actionability", 0.0)]
    table = table_of(rows)
    assert is_flagged(table, tutor="qwen", domain="maths", dimension="gender", metric="actionability")
    assert not is_flagged(table, tutor="qwen", domain="maths", dimension="gender", metric="corrective_tone")
    assert flagged_share(table) == (1, 3)
