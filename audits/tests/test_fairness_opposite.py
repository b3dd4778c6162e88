"""The opposite (2 × 2) decomposition on hand-made examples where the answer is known by construction."""

import numpy as np
import pytest

from audits.fairness import ConditionSpec, ScoreFrame, contrast_table, opposite_decomposition

DESIGN = {
    "ff": ConditionSpec("opposite", stated_gender="female", perceived_gender="female"),
    "fm": ConditionSpec("opposite", stated_gender="female", perceived_gender="male"),
    "mf": ConditionSpec("opposite", stated_gender="male", perceived_gender="female"),
    "mm": ConditionSpec("opposite", stated_gender="male", perceived_gender="male"),
}
N = 20


def frame_from_cells(cells: dict[str, np.ndarray]) -> ScoreFrame:
    columns = {"tutor": [], "domain": [], "question": [], "condition": [], "metric": [], "value": []}
    for condition, values in cells.items():
        for question, value in enumerate(values):
            for name, item in zip(columns, ("t", "maths", question, condition, "corrective_tone", value), strict=True):
                columns[name].append(item)
    return ScoreFrame(**{k: np.asarray(v) for k, v in columns.items()})


def components(cells: dict[str, np.ndarray]) -> dict[str, float]:
    table = contrast_table(frame_from_cells(cells), DESIGN, metrics=["corrective_tone"], n_boot=200)
    return {row.dimension: row.r for row in table.rows}


# With every question shifted by the same amount, a positive difference gives Z = sqrt(N), so r = +1
# exactly; no difference gives r = 0. Cells are (stated, perceived); B is the perceived-male side.
base = np.linspace(0.0, 1.0, N)


def test_tutor_only_effect():
    # the score depends only on the gender the tutor is told: perceived male +1
    r = components({"ff": base, "mf": base, "fm": base + 1, "mm": base + 1})
    assert r == pytest.approx(
        {"correct_gap": 1.0, "wrong_gap": 1.0, "tutor_effect": 1.0, "simulator_effect": 0.0, "interaction": 0.0}
    )


def test_simulator_only_effect():
    # the score depends only on the student's self-stated gender: stated male +1
    r = components({"ff": base, "fm": base, "mf": base + 1, "mm": base + 1})
    # wrong gap = (stated female, perceived male) - (stated male, perceived female) = -1
    assert r == pytest.approx(
        {"correct_gap": 1.0, "wrong_gap": -1.0, "tutor_effect": 0.0, "simulator_effect": 1.0, "interaction": 0.0}
    )


def test_interaction_only():
    # matched cells +1: a mismatch itself changes the tutoring, the gaps cancel on average
    r = components({"ff": base + 1, "mm": base + 1, "fm": base, "mf": base})
    assert r == pytest.approx(
        {"correct_gap": 0.0, "wrong_gap": 0.0, "tutor_effect": 0.0, "simulator_effect": 0.0, "interaction": 1.0}
    )


def test_decomposition_summary_is_mean_absolute_r():
    cells = {"ff": base, "mf": base, "fm": base + 1, "mm": base + 1}
    table = contrast_table(frame_from_cells(cells), DESIGN, metrics=["corrective_tone"], n_boot=200)
    summary = {c.group: c.value for c in opposite_decomposition(table, metrics=["corrective_tone"])}
    assert summary["wrong_gap"] == 1.0 and summary["simulator_effect"] == 0.0


def test_opposite_needs_four_cells():
    with pytest.raises(ValueError):
        contrast_table(frame_from_cells({"ff": base}), {"ff": DESIGN["ff"]}, metrics=["corrective_tone"])
