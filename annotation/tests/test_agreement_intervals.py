"""Bootstrap intervals of α, Fleiss' κ, Cohen's κ and AC1: points equal the reference packages, content seeds."""

import krippendorff
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import fleiss_kappa as statsmodels_fleiss_kappa

from annotation.agreement import REASON_NO_PAIRABLE_UNIT, REASON_ONE_CATEGORY, fleiss_kappa_from_counts
from annotation.agreement_intervals import (
    _ac_of_resamples,
    _alpha_of_resamples,
    _fleiss_of_resamples,
    _kappa_from_tables,
    ac1_interval,
    alpha_interval,
    cohen_interval,
    content_seed,
    fleiss_interval,
)
from annotation.gwet import counts_table, gwet_ac, gwet_ac_from_counts, weight_matrix
from annotation.tests.published_ratings import CAC_RAW4RATERS

N_BOOT = 200  # enough to test the shape and the seeding quickly; the coverage benchmark uses 1,000


def ratings(seed=3, raters=3, items=60, keep=0.75, shares=(0.6, 0.3, 0.1)):
    """Raters × items on 0/1/2: each rater keeps the item's true value with probability ``keep``."""
    rng = np.random.default_rng(seed)
    truth = rng.choice(3, size=items, p=shares)
    return np.where(rng.random((raters, items)) < keep, truth, rng.integers(0, 3, size=(raters, items))).astype(float)


def assert_interval_shape(result):
    assert result["low"] <= result["estimate"] <= result["high"]
    assert result["undefined_reason"] == ""
    assert 0 < result["n_boot"] <= N_BOOT
    assert result["confidence"] == 0.95


# --- content seeds ----------------------------------------------------------------------------------


def test_content_seed_is_stable_and_depends_on_content():
    data = [[1, 2, None], [1, 2, 3]]
    # sha256 of the canonical JSON: fixed across processes and Python versions (unlike hash()).
    assert content_seed("x", data) == content_seed("x", [[1, 2, None], [1, 2, 3]])
    assert content_seed("x", np.array([[1.0, 2.0, np.nan]])) == content_seed("x", [[1.0, 2.0, None]])
    assert content_seed("x", data) != content_seed("x", [[1, 2, None], [1, 2, 2]])
    assert 0 <= content_seed("x") < 2**63


def test_same_data_same_interval_and_another_seed_another_interval():
    data = ratings()
    first, again = alpha_interval(data, "ordinal", n_boot=N_BOOT), alpha_interval(data.copy(), "ordinal", n_boot=N_BOOT)
    other = alpha_interval(data, "ordinal", n_boot=N_BOOT, seed=12345)

    assert (first["low"], first["high"]) == (again["low"], again["high"])
    assert (first["low"], first["high"]) != (other["low"], other["high"])


# --- Krippendorff's alpha ---------------------------------------------------------------------------


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
def test_alpha_point_equals_krippendorff_package(level):
    data = ratings(seed=11)
    data[0, :5] = np.nan
    result = alpha_interval(data, level, n_boot=N_BOOT)

    # Reference: the `krippendorff` package, reliability data as raters × units.
    expected = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
    assert result["estimate"] == pytest.approx(expected, abs=1e-9)
    assert result["statistic"] == f"krippendorff_alpha_{level}"
    assert_interval_shape(result)


def test_alpha_units_and_p_below():
    data = ratings(seed=5, items=40)
    data[1:, :4] = np.nan  # four items rated once: rated, not pairable
    data[:, 4] = np.nan  # one item not rated at all
    result = alpha_interval(data, "ordinal", n_boot=N_BOOT)

    assert result["units"] == {"items_rated": 39, "items_pairable": 35, "pairable_values": 105}
    assert set(result["p_below"]) == {0.667, 0.8}
    assert 0.0 <= result["p_below"][0.667] <= result["p_below"][0.8] <= 1.0


def test_alpha_p_below_is_the_share_of_resampled_alpha_below_each_minimum():
    # Hayes & Krippendorff (2007): q = P(α < α_min) from the bootstrap distribution.
    near_perfect = alpha_interval(ratings(seed=2, keep=0.97, items=80), "nominal", n_boot=N_BOOT)
    poor = alpha_interval(ratings(seed=2, keep=0.3, items=80), "nominal", n_boot=N_BOOT)

    assert near_perfect["p_below"][0.667] == 0.0
    assert poor["p_below"][0.8] == 1.0


def test_alpha_on_string_ratings_with_a_value_domain():
    codes = ratings(seed=8)
    names = np.array(["low", "mid", "high"], dtype=object)[codes.astype(int)]
    by_name = alpha_interval(names, "ordinal", value_domain=["low", "mid", "high"], n_boot=N_BOOT)
    by_code = alpha_interval(codes, "ordinal", n_boot=N_BOOT)

    assert by_name["estimate"] == pytest.approx(by_code["estimate"], abs=1e-12)


def test_undefined_alpha_has_no_bounds_and_says_why():
    one_value = alpha_interval([["a", "a", None], ["a", "a", "a"]], "nominal", n_boot=N_BOOT)
    unpaired = alpha_interval([["a", None], [None, "b"]], "nominal", n_boot=N_BOOT)

    assert (one_value["estimate"], one_value["low"], one_value["high"]) == (None, None, None)
    assert one_value["undefined_reason"] == REASON_ONE_CATEGORY
    assert one_value["p_below"] == {0.667: None, 0.8: None}
    assert unpaired["undefined_reason"] == REASON_NO_PAIRABLE_UNIT and unpaired["n_boot"] == 0


# --- Fleiss' kappa ----------------------------------------------------------------------------------


def test_fleiss_point_equals_statsmodels():
    units_by_raters = ratings(seed=21, raters=4).T
    counts = np.stack([(units_by_raters == v).sum(axis=1) for v in (0, 1, 2)], axis=1)
    result = fleiss_interval(units_by_raters, n_boot=N_BOOT)

    # Reference: statsmodels.stats.inter_rater.fleiss_kappa on the units × categories table.
    assert result["estimate"] == pytest.approx(statsmodels_fleiss_kappa(counts, method="fleiss"), abs=1e-9)
    assert result["statistic"] == "fleiss_kappa"
    assert_interval_shape(result)
    assert result["units"] == {"items_rated": 60, "items_pairable": 60, "pairable_values": 240}


def test_undefined_fleiss_has_no_bounds():
    result = fleiss_interval([["x", "x"], ["x", "x"]], n_boot=N_BOOT)
    assert result["low"] is None and result["high"] is None and result["undefined_reason"] == REASON_ONE_CATEGORY


# --- Cohen's kappa ----------------------------------------------------------------------------------


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_cohen_point_equals_sklearn(weights):
    data = ratings(seed=31, raters=2)
    pairs = [(i, data[0, i], data[1, i]) for i in range(data.shape[1])]
    result = cohen_interval(pairs, [0.0, 1.0, 2.0], weights=weights, n_boot=N_BOOT)

    # Reference: sklearn.metrics.cohen_kappa_score.
    assert result["estimate"] == pytest.approx(cohen_kappa_score(data[0], data[1], weights=weights), abs=1e-9)
    assert_interval_shape(result)
    assert result["units"]["items_rated"] == 60


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_resampled_kappa_formula_equals_sklearn_on_resamples(weights):
    # The resamples use a vectorised κ; on any table it must equal scikit-learn's cohen_kappa_score.
    rng = np.random.default_rng(4)
    steps = np.abs(np.arange(3)[:, None] - np.arange(3)[None, :]).astype(float)
    disagreement = {None: (steps > 0).astype(float), "linear": steps, "quadratic": steps**2}[weights]
    for _ in range(10):
        a, b = rng.integers(0, 3, 50), rng.integers(0, 3, 50)
        table = np.zeros((1, 3, 3))
        np.add.at(table[0], (a, b), 1)
        expected = cohen_kappa_score(a, b, labels=[0, 1, 2], weights=weights)
        assert _kappa_from_tables(table, disagreement)[0] == pytest.approx(expected, abs=1e-12)


def test_cohen_drops_missing_pairs_and_rejects_values_off_the_scale():
    pairs = [(1, "0", "0"), (2, "1", None), (3, "1", "1"), (4, "2", "1"), (5, "0", "1")]
    result = cohen_interval(pairs, ["0", "1", "2"], weights="linear", n_boot=N_BOOT)
    # Item 2 is rated (by one side) but not pairable: κ uses the 4 items both rated, 8 values.
    assert result["units"] == {"items_rated": 5, "items_pairable": 4, "pairable_values": 8}

    with pytest.raises(ValueError):
        cohen_interval([(1, "0", "9"), (2, "1", "0")], ["0", "1"], n_boot=N_BOOT)


def test_undefined_cohen_has_no_bounds():
    result = cohen_interval([(1, "a", "a"), (2, "a", "a")], ["a", "b"], n_boot=N_BOOT)
    assert result["estimate"] is None and result["low"] is None and result["undefined_reason"]


# --- Gwet's AC1 -------------------------------------------------------------------------------------


@pytest.mark.parametrize("weights", [None, "linear", "quadratic", "ordinal"])
def test_ac1_point_equals_gwet_and_interval_contains_it(weights):
    units_by_raters = ratings(seed=41).T
    result = ac1_interval(units_by_raters, [0.0, 1.0, 2.0], weights=weights, n_boot=N_BOOT)

    assert result["estimate"] == gwet_ac(units_by_raters, [0.0, 1.0, 2.0], weights).value
    assert_interval_shape(result)


def test_ac1_point_equals_irrcac_readme_example():
    # Gwet's irrCAC README: gwet.ac1.raw(cac.raw4raters) gives AC1 = 0.7754.
    result = ac1_interval(CAC_RAW4RATERS, [1, 2, 3, 4, 5], n_boot=N_BOOT)

    assert result["estimate"] == pytest.approx(0.775444068127, abs=1e-9)
    assert result["units"] == {"items_rated": 12, "items_pairable": 11, "pairable_values": 40}


def test_invalid_parameters_raise():
    with pytest.raises(ValueError):
        alpha_interval(ratings(), "ordinal", n_boot=0)
    with pytest.raises(ValueError):
        fleiss_interval(ratings().T, confidence=1.0)


# --- the resampled coefficients, all resamples at once ------------------------------------------------


def _drawn(rng, n_units, size=25):
    """Resamples of unit indices and their weights (how often each unit was drawn)."""
    indices = [rng.integers(0, n_units, size=n_units) for _ in range(size)]
    return indices, np.stack([np.bincount(i, minlength=n_units) for i in indices]).astype(float)


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
def test_resampled_alpha_equals_the_krippendorff_package_on_each_resample(level):
    rng = np.random.default_rng(11)
    data = ratings(seed=9, raters=4, items=30)
    data[rng.random(data.shape) < 0.25] = np.nan
    domain = np.array([0.0, 1.0, 2.0])
    counts = np.stack([(data == v).sum(axis=0) for v in domain], axis=1).astype(float)
    counts = counts[counts.sum(axis=1) >= 2]
    indices, weights = _drawn(rng, len(counts))
    expected = [
        krippendorff.alpha(value_counts=counts[i], value_domain=domain, level_of_measurement=level) for i in indices
    ]
    assert np.allclose(_alpha_of_resamples(counts, domain, level, weights), expected, atol=1e-12, rtol=0)


def test_resampled_fleiss_and_ac_equal_their_formulas_on_each_resample():
    rng = np.random.default_rng(12)
    data = ratings(seed=4, raters=4, items=30).T
    data[rng.random(data.shape) < 0.3] = np.nan  # unequal numbers of ratings, some items rated once
    table, categories = counts_table(data.tolist(), [0.0, 1.0, 2.0])
    table = table[table.sum(axis=1) >= 1]
    indices, weights = _drawn(rng, len(table))
    fleiss = [fleiss_kappa_from_counts(table[i]).value for i in indices]
    assert np.allclose(_fleiss_of_resamples(table, weights), fleiss, atol=1e-12, rtol=0)
    for name in (None, "linear", "quadratic"):
        w = weight_matrix(categories, name)
        ac = [gwet_ac_from_counts(table[i], w) for i in indices]
        assert np.allclose(_ac_of_resamples(table, w, weights), ac, atol=1e-12, rtol=0)
    # A resample with one category only is left out, as the coefficient is undefined on it.
    one = np.array([[2.0, 0.0, 0.0], [0.0, 3.0, 0.0]])
    assert np.isnan(_fleiss_of_resamples(one, np.array([[2.0, 0.0]])))[0]
