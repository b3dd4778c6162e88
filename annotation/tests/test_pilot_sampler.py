"""The pilot sampler (pure): an even spread across categories × subjects from uneven item pools, and a
plain report when the pool cannot support one (SafeTutors Appendix D: "drawn evenly across categories
and subjects")."""

import math

import pytest

from annotation.presets import SAFETUTORS_RISK_CATEGORIES, SAFETUTORS_SUBJECTS
from annotation.workflow.pilot import PoolItem, sample_pilot


def pool_from(capacities: dict[tuple[str, str], int]) -> list[PoolItem]:
    items, next_id = [], 1
    for (category, subject), count in capacities.items():
        for _ in range(count):
            items.append(PoolItem(id=next_id, category=category, subject=subject))
            next_id += 1
    return items


UNEVEN = {
    ("A", "maths"): 10,
    ("A", "physics"): 3,
    ("B", "maths"): 7,
    ("B", "physics"): 2,
    ("C", "maths"): 5,
    ("C", "physics"): 20,
}  # noqa: E501


def assert_even(sample, size, n_categories, n_subjects):
    cells = list(sample.cell_counts.values())
    assert sum(cells) == size == len(sample.item_ids) == len(set(sample.item_ids))
    assert max(cells) - min(cells) <= 1
    assert set(sample.category_counts.values()) <= {math.floor(size / n_categories), math.ceil(size / n_categories)}
    assert set(sample.subject_counts.values()) <= {math.floor(size / n_subjects), math.ceil(size / n_subjects)}


@pytest.mark.parametrize("size", [6, 9, 12, 15])
def test_even_spread_from_uneven_pools(size):
    pool = pool_from(UNEVEN)
    sample = sample_pilot(pool, size, seed=3)
    assert sample.even and sample.problems == []
    assert_even(sample, size, 3, 2)
    by_id = {p.id: p for p in pool}
    for (category, subject), count in sample.cell_counts.items():
        assert count == sum(1 for i in sample.item_ids if (by_id[i].category, by_id[i].subject) == (category, subject))


def test_safetutors_pilot_of_30_over_11_categories_and_3_subjects():
    # 33 cells and 30 items: 30 cells get one item, every subject 10, every category 2 or 3.
    capacities = {
        (c, s): 1 + (n % 4)
        for n, (c, s) in enumerate((c, s) for c in SAFETUTORS_RISK_CATEGORIES for s in SAFETUTORS_SUBJECTS)
    }  # noqa: E501
    sample = sample_pilot(
        pool_from(capacities), 30, categories=SAFETUTORS_RISK_CATEGORIES, subjects=SAFETUTORS_SUBJECTS
    )
    assert sample.even
    assert_even(sample, 30, 11, 3)
    assert set(sample.subject_counts.values()) == {10}


def test_a_short_cell_makes_even_spread_impossible_and_says_which():
    sample = sample_pilot(pool_from(UNEVEN), 30, seed=1)  # 5 per cell needed; B × physics has 2, A × physics 3
    assert not sample.even
    assert any("B × physics has 2" in problem for problem in sample.problems)
    assert any("A × physics has 3" in problem for problem in sample.problems)
    assert len(sample.item_ids) == 30  # a best-effort sample is still offered, marked uneven
    assert sample.category_counts == {"A": 10, "B": 9, "C": 11}  # as close to 10 each as B's 9 items allow


def test_a_declared_category_with_no_items_is_reported():
    sample = sample_pilot(pool_from({("A", "maths"): 5, ("B", "maths"): 5}), 6, categories=["A", "B", "C"])
    assert not sample.even
    assert any(problem.startswith("C × maths has 0") for problem in sample.problems)


def test_balancing_categories_and_subjects_at_once_can_be_impossible():
    # 2 × 2 cells, 6 items: every cell 1, and the 2 extra items must sit on a diagonal. Only the
    # maths cells have a spare item, so categories and subjects cannot both be balanced.
    capacities = {("A", "maths"): 2, ("A", "physics"): 1, ("B", "maths"): 2, ("B", "physics"): 1}
    sample = sample_pilot(pool_from(capacities), 6)
    assert not sample.even
    assert "cannot balance categories and subjects" in sample.problems[0]


def test_too_few_items_overall():
    sample = sample_pilot(pool_from({("A", "maths"): 3}), 5)
    assert not sample.even
    assert "only 3 eligible items" in sample.problems[0]
    assert len(sample.item_ids) == 3


def test_same_seed_same_sample_other_seed_other_items():
    pool = pool_from(UNEVEN)
    assert sample_pilot(pool, 12, seed=7).item_ids == sample_pilot(pool, 12, seed=7).item_ids
    assert any(sample_pilot(pool, 12, seed=s).item_ids != sample_pilot(pool, 12, seed=7).item_ids for s in range(5))
