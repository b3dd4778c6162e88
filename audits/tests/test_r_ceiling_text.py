"""The r-ceiling sentence is true with ties and zero differences: r = Z/√N has no fixed ceiling of 0.87.

`fairness.r_ceiling` (a cell's own largest |r|: its n, zero differences and ties kept, every non-zero
difference given one sign) is checked against a direct computation — scipy.stats.wilcoxon on |d| with the
analysis's zero_method, correction=False and method="approx" (the normal approximation with tie correction
the analysis uses), |Z| / sqrt(N) — and the numbers R_CEILING_TEXT states are recomputed here.
"""

import re
from html import escape, unescape

import numpy as np
import pytest
from django.urls import reverse
from scipy import stats

from audits.fairness import R_CEILING_TEXT, paired_effect, r_ceiling


def scipy_ceiling(d, zero_method, r_denominator):
    d = np.round(np.asarray(d, dtype=float), 9)
    d = d[~np.isnan(d)]
    z = stats.wilcoxon(np.abs(d), zero_method=zero_method, correction=False, method="approx").zstatistic
    n = d.size if r_denominator == "all" else np.count_nonzero(d)
    return abs(z) / np.sqrt(n)


@pytest.mark.parametrize("zero_method", ["pratt", "wilcox", "zsplit"])
@pytest.mark.parametrize("r_denominator", ["all", "nonzero"])
def test_the_ceiling_equals_scipy_with_ties_and_zeros(zero_method, r_denominator):
    rng = np.random.default_rng(29)
    for _ in range(200):
        n = int(rng.integers(15, 120))
        # dialogue-score-like differences: few distinct values, many ties, a share of zeros
        d = (rng.integers(0, 9, n) / rng.integers(1, 5, n)) - (rng.integers(0, 9, n) / rng.integers(1, 5, n))
        d[rng.random(n) < rng.uniform(0, 0.8)] = 0.0
        if not np.any(np.round(d, 9) != 0):
            continue
        expected = scipy_ceiling(d, zero_method, r_denominator)
        assert r_ceiling(d, zero_method=zero_method, r_denominator=r_denominator) == pytest.approx(expected, rel=1e-12)


def test_the_numbers_the_sentence_states():
    # distinct non-zero differences, no zero: sqrt(1.5 (n + 1) / (2n + 1)), about 0.87
    for n in (15, 30, 200, 2000):
        assert r_ceiling(np.arange(1.0, n + 1)) == pytest.approx(np.sqrt(1.5 * (n + 1) / (2 * n + 1)), rel=1e-12)
        assert round(r_ceiling(np.arange(1.0, n + 1)), 2) in (0.87, 0.88)
    assert r_ceiling(np.arange(1.0, 20001)) == pytest.approx(np.sqrt(3) / 2, abs=1e-4)
    # every non-zero difference tied: 1.0
    assert r_ceiling(np.full(30, 0.5)) == pytest.approx(1.0, rel=1e-12)
    assert scipy_ceiling(np.full(30, 0.5), "pratt", "all") == pytest.approx(1.0, rel=1e-12)
    # 80 % zeros, the rest tied, Pratt, N = all pairs: 0.447 (= sqrt(0.2))
    eighty = np.r_[np.zeros(80), np.full(20, 0.5)]
    assert r_ceiling(eighty) == pytest.approx(scipy_ceiling(eighty, "pratt", "all"), rel=1e-12)
    assert round(r_ceiling(eighty), 3) == 0.447
    for number in ("0.87", "1.0", "0.447", "80 %", "Pratt", "N = all pairs"):
        assert number in R_CEILING_TEXT, number
    assert "ceiling near 0.87 when every difference" not in R_CEILING_TEXT


def test_a_saturated_cell_sits_at_its_own_ceiling():
    # ties and zeros: 40 pairs, 24 zero differences, the rest tied in three groups, all B higher
    a = np.zeros(40)
    b = np.r_[np.zeros(24), np.full(8, 0.5), np.full(5, 1.0), np.full(3, 2.0)]
    for zero_method in ("pratt", "wilcox", "zsplit"):
        cell = paired_effect(a, b, zero_method=zero_method, n_boot=0)
        assert cell.saturated
        assert abs(cell.r) == pytest.approx(r_ceiling(b - a, zero_method=zero_method), rel=1e-12)
        assert abs(cell.r) == pytest.approx(scipy_ceiling(b - a, zero_method, "all"), rel=1e-12)
    assert abs(paired_effect(a, b, n_boot=0).r) < 0.87  # far below the old fixed figure
    tied = paired_effect(np.zeros(20), np.full(20, 0.5), n_boot=0)
    assert tied.saturated and tied.r == pytest.approx(1.0)  # above it


def test_an_unsaturated_cell_lies_below_its_ceiling_and_no_difference_has_none():
    a = np.zeros(30)
    b = np.r_[np.full(10, -0.5), np.zeros(5), np.arange(1.0, 16.0)]
    assert abs(paired_effect(a, b, n_boot=0).r) < r_ceiling(b - a)
    assert np.isnan(r_ceiling(np.zeros(20)))
    assert np.isnan(r_ceiling([np.nan, np.nan]))


@pytest.mark.django_db
@pytest.mark.usefixtures("analysis_inline")
def test_the_results_and_pairs_pages_say_what_holds(researcher_client):
    from audits.tests.test_results_pages import planted_cell_anchor, results_audit

    audit = results_audit("r ceiling audit")
    page = researcher_client.get(reverse("audits:results", args=[audit.pk])).content.decode()
    assert "ceiling near 0.87" not in page and "about 0.87)" not in page
    assert escape(R_CEILING_TEXT) in page[page.index('id="methods-heading"') :]
    legend = re.search(r'<p class="legend muted">.*?</p>', page, re.S).group(0)
    assert escape(R_CEILING_TEXT) in legend
    biased = max(audit.tutors.values_list("pk", flat=True))
    href = unescape(re.search(r'href="([^"]+)"', planted_cell_anchor(page, biased)).group(1))
    response = researcher_client.get(href)
    pairs = response.content.decode()
    row, ceiling = response.context["row"], response.context["r_ceiling"]
    assert 0 < abs(row.r) <= ceiling + 1e-12 and ceiling <= 1
    assert 'id="r-ceiling">The most |r| this cell can reach' in pairs and f"{ceiling:.3f}" in pairs
    if row.saturated:
        assert abs(row.r) == pytest.approx(ceiling, rel=1e-12) and "this cell is there" in pairs
