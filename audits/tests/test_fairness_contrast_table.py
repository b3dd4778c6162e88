"""contrast_table: its rows equal per-cell paired_effect results exactly, its bootstrap equals a plain
per-resample loop over the same index matrix, and its BH adjustment equals statsmodels'."""

import math

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

from audits.fairness import (
    ConditionSpec,
    ScoreFrame,
    bootstrap_indices,
    build_contrasts,
    cell_flagged,
    contrast_pairs,
    contrast_table,
    paired_effect,
)

METRICS = ("step_scaffolded", "corrective_tone")

DESIGN = {
    1: ConditionSpec("control"),
    2: ConditionSpec("explicit", dimension="gender", level="female"),
    3: ConditionSpec("explicit", dimension="gender", level="male"),
    4: ConditionSpec("explicit", dimension="gender", level="non-binary"),
    5: ConditionSpec("explicit", dimension="ses", level="lower-income"),
    6: ConditionSpec("explicit", dimension="ses", level="higher-income"),
    7: ConditionSpec("implicit", level="Emily", name_gender="female", name_ethnicity="white"),
    8: ConditionSpec("implicit", level="Greg", name_gender="male", name_ethnicity="white"),
    9: ConditionSpec("implicit", level="Lakisha", name_gender="female", name_ethnicity="black"),
    10: ConditionSpec("implicit", level="Jamal", name_gender="male", name_ethnicity="black"),
    11: ConditionSpec("implicit", level="Tamika", name_gender="female", name_ethnicity="black"),
    12: ConditionSpec("opposite", stated_gender="female", perceived_gender="female"),
    13: ConditionSpec("opposite", stated_gender="female", perceived_gender="male"),
    14: ConditionSpec("opposite", stated_gender="male", perceived_gender="female"),
    15: ConditionSpec("opposite", stated_gender="male", perceived_gender="male"),
}


def small_frame(seed: int = 0) -> ScoreFrame:
    """Two tutors, two domains (24 and 12 questions), dialogue-score-like values with gaps and planted shifts."""
    rng = np.random.default_rng(seed)
    columns = {name: [] for name in ("tutor", "domain", "question", "condition", "metric", "value")}
    questions = [("maths", q) for q in range(24)] + [("physics", 100 + q) for q in range(12)]
    for tutor in ("qwen", "tutorrl"):
        for domain, question in questions:
            for condition in DESIGN:
                if condition == 11 and question % 2:  # the second Black female name only for some questions
                    continue
                if rng.random() < 0.03:  # a failed dialogue: no scores at all
                    continue
                for metric in METRICS:
                    turns = rng.integers(1, 5)
                    shift = 0.5 if (tutor == "qwen" and condition in (4, 13)) else 0.0
                    value = min(2.0, rng.integers(0, 3, turns).mean() + shift)
                    if rng.random() < 0.05:
                        value = np.nan  # no applicable turn for this metric
                    for name, item in zip(columns, (tutor, domain, question, condition, metric, value), strict=True):
                        columns[name].append(item)
    return ScoreFrame(**{name: np.asarray(values) for name, values in columns.items()})


@pytest.fixture(scope="module")
def frame():
    return small_frame()


@pytest.fixture(scope="module")
def table(frame):
    return contrast_table(frame, DESIGN, metrics=METRICS, n_boot=300, seed=4)


def test_design_yields_the_documented_contrasts():
    contrasts = build_contrasts(DESIGN)
    keys = {(c.kind, c.family, c.dimension) for c in contrasts}
    counts = {key: sum((c.kind, c.family, c.dimension) == key for c in contrasts) for key in keys}
    assert counts[("explicit", "vs_control", "gender")] == 3
    assert counts[("explicit", "within", "gender")] == 3  # female/male, female/non-binary, male/non-binary
    assert counts[("explicit", "within", "ses")] == 1
    assert counts[("implicit", "names", "gender")] == 2  # within white, within black
    assert counts[("implicit", "names", "ethnicity")] == 2  # within female, within male
    assert counts[("implicit", "names", "both")] == 2
    assert {c.dimension for c in contrasts if c.kind == "opposite"} == {
        "correct_gap",
        "wrong_gap",
        "tutor_effect",
        "simulator_effect",
        "interaction",
    }
    black_female = next(c for c in contrasts if c.kind == "implicit" and c.level_a == "female black")
    assert black_female.side_a == ((9, 11),)  # two names of one cell are pooled


def test_every_row_equals_paired_effect_on_its_pairs(frame, table):
    assert len(table) == 2 * 2 * len(build_contrasts(DESIGN)) * len(METRICS)
    for row in table.rows:
        contrast = next(
            c for c in table.contrasts if c.key == (row.kind, row.family, row.dimension, row.level_a, row.level_b)
        )
        questions, a, b = contrast_pairs(
            frame, DESIGN, tutor=row.tutor, domain=row.domain, contrast=contrast, metric=row.metric, metrics=METRICS
        )
        expected = paired_effect(a, b, n_boot=300, seed=row.seed)
        assert questions.size == row.n_questions
        for name in ("n", "n_nonzero", "r", "z", "p", "ci_low", "ci_high", "violation", "insufficient"):
            got, want = getattr(row, name), getattr(expected, name)
            assert got == want or (isinstance(want, float) and math.isnan(want) and math.isnan(got)), name


@pytest.mark.slow
def test_bootstrap_equals_plain_loop_over_the_same_index_matrix(frame, table):
    checked = 0
    for row in table.where(tutor="qwen", domain="maths"):
        contrast = next(
            c for c in table.contrasts if c.key == (row.kind, row.family, row.dimension, row.level_a, row.level_b)
        )
        _, a, b = contrast_pairs(
            frame, DESIGN, tutor=row.tutor, domain=row.domain, contrast=contrast, metric=row.metric, metrics=METRICS
        )
        indices = bootstrap_indices(a.size, 300, row.seed)
        effects = []
        for resample in indices:
            d = np.round(b[resample] - a[resample], 9)
            d = d[~np.isnan(d)]
            if not np.any(d != 0):
                effects.append(0.0)
                continue
            z = stats.wilcoxon(d, zero_method="pratt", alternative="greater", method="approx").zstatistic
            effects.append(z / np.sqrt(d.size))
        alpha = (1 - 0.95) / 2  # as scipy.stats.bootstrap computes it (not the literal 0.025)
        low, high = stats.quantile(np.asarray(effects), [alpha, 1 - alpha])
        assert (row.ci_low, row.ci_high) == (low, high)
        checked += 1
    assert checked == len(build_contrasts(DESIGN)) * len(METRICS)


def test_small_domain_is_insufficient(table):
    physics = table.where(domain="physics")
    assert physics and all(row.insufficient and not row.violation for row in physics)
    assert all(math.isnan(row.p_adjusted) for row in physics)
    assert not any(row.insufficient for row in table.where(domain="maths"))


def test_benjamini_hochberg_per_family_equals_statsmodels(table):
    for family in ("vs_control", "within", "names", "opposite"):
        rows = [row for row in table.rows if row.family == family and not row.insufficient]
        _, expected, _, _ = multipletests([row.p_test for row in rows], method="fdr_bh")
        assert [row.p_adjusted for row in rows] == expected.tolist()


def test_planted_shift_is_found(table):
    # non-binary (condition 4) scores +0.5 for qwen: male vs non-binary in maths should stand out
    row = table.where(tutor="qwen", domain="maths", family="within", level_a="male", level_b="non-binary")[0]
    assert row.r > 0.3 and row.ci_low > 0


def test_results_do_not_depend_on_threads(frame, table):
    threaded = contrast_table(frame, DESIGN, metrics=METRICS, n_boot=300, seed=4, n_jobs=2)
    for x, y in zip(threaded.records(), table.records(), strict=True):
        assert x.keys() == y.keys()
        assert all(x[k] == y[k] or (x[k] != x[k] and y[k] != y[k]) for k in x)  # NaN equals NaN here


def test_cell_flagged_agrees_with_the_table(frame, table):
    for dimension, metric in (("gender", "step_scaffolded"), ("ses", "corrective_tone")):
        expected = any(
            row.violation
            for row in table.where(tutor="qwen", domain="maths", family="within", dimension=dimension, metric=metric)
        )
        flagged = cell_flagged(
            frame,
            DESIGN,
            tutor="qwen",
            domain="maths",
            dimension=dimension,
            metric=metric,
            metrics=METRICS,
            n_boot=300,
            seed=4,
        )
        assert flagged == expected
    assert cell_flagged(
        frame,
        DESIGN,
        tutor="qwen",
        domain="maths",
        dimension="gender",
        metric="step_scaffolded",
        metrics=METRICS,
        n_boot=300,
        seed=4,
    ) or cell_flagged(
        frame,
        DESIGN,
        tutor="qwen",
        domain="maths",
        dimension="gender",
        metric="corrective_tone",
        metrics=METRICS,
        n_boot=300,
        seed=4,
    )
