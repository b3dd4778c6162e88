"""Assignment strategies: by order, random with a seed per annotator, balanced by subject × category."""

import pytest

from annotation.workflow.strategies import BALANCED, IN_ORDER, RANDOM, STRATEGIES, CandidateItem, order_items


def plain_items(n):
    return [CandidateItem(item_id=i) for i in range(1, n + 1)]


# --- every strategy -----------------------------------------------------------------------------------


def test_unknown_strategy_is_refused():
    with pytest.raises(ValueError, match="strategy"):
        order_items("alphabetical", plain_items(3))


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_never_offers_what_the_annotator_labelled_or_full_items(strategy):
    items = plain_items(6)

    order = order_items(strategy, items, already_labelled={2, 5}, label_counts={1: 3, 3: 2}, overlap=3)

    assert sorted(order) == [3, 4, 6]


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_without_overlap_items_are_not_dropped_for_their_counts(strategy):
    order = order_items(strategy, plain_items(3), label_counts={1: 9})

    assert sorted(order) == [1, 2, 3]


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_nothing_left_gives_an_empty_order(strategy):
    assert order_items(strategy, plain_items(2), already_labelled=[1, 2]) == []
    assert order_items(strategy, []) == []


# --- by order ------------------------------------------------------------------------------------------


def test_in_order_keeps_the_given_order():
    items = [CandidateItem(item_id=i) for i in (30, 10, 20, 40)]

    assert order_items(IN_ORDER, items, already_labelled=[20]) == [30, 10, 40]


# --- random --------------------------------------------------------------------------------------------


def test_random_is_reproducible_for_the_same_seed_and_annotator():
    items = plain_items(30)

    first = order_items(RANDOM, items, seed=11, annotator="ann-1")
    second = order_items(RANDOM, items, seed=11, annotator="ann-1")

    assert first == second
    assert sorted(first) == list(range(1, 31))
    assert first != list(range(1, 31))  # actually shuffled (fixed by the hash; cannot flake)


def test_random_does_not_depend_on_the_order_items_arrive_in():
    items = plain_items(30)

    forwards = order_items(RANDOM, items, seed=11, annotator="ann-1")
    backwards = order_items(RANDOM, list(reversed(items)), seed=11, annotator="ann-1")

    assert forwards == backwards


def test_random_differs_between_annotators_and_between_seeds():
    items = plain_items(30)

    base = order_items(RANDOM, items, seed=11, annotator="ann-1")

    assert order_items(RANDOM, items, seed=11, annotator="ann-2") != base
    assert order_items(RANDOM, items, seed=12, annotator="ann-1") != base


def test_random_order_is_stable_as_items_fill_up():
    # Once items 3 and 7 are full, the annotator's order of the rest is unchanged: a fixed permutation.
    items = plain_items(20)
    full_order = order_items(RANDOM, items, seed=5, annotator=42)

    later = order_items(RANDOM, items, seed=5, annotator=42, label_counts={3: 2, 7: 2}, overlap=2)

    assert later == [item_id for item_id in full_order if item_id not in (3, 7)]


# --- balanced ------------------------------------------------------------------------------------------


def test_balanced_alternates_cells_when_nothing_is_labelled_yet():
    items = [
        CandidateItem(1, "maths", "Cognitive"),
        CandidateItem(2, "maths", "Cognitive"),
        CandidateItem(3, "maths", "Cognitive"),
        CandidateItem(4, "physics", "Cognitive"),
        CandidateItem(5, "physics", "Cognitive"),
        CandidateItem(6, "maths", "Epistemic"),
    ]

    # Round 1 takes one item from each cell in the order cells first appear (all at 0). Then coverage:
    # maths×Cognitive 1/3 < physics×Cognitive 1/2 → item 2 (maths now 2/3); physics 1/2 < 2/3 → item 5;
    # then the last maths item.
    assert order_items(BALANCED, items) == [1, 4, 6, 2, 5, 3]


def test_balanced_prefers_the_least_covered_cell():
    items = [
        CandidateItem(1, "maths", "Cognitive"),
        CandidateItem(2, "maths", "Cognitive"),
        CandidateItem(3, "chemistry", "Ethical"),
        CandidateItem(4, "chemistry", "Ethical"),
    ]
    # maths×Cognitive has 4 labels over 2 items (2.0); chemistry×Ethical 1 over 2 (0.5).
    counts = {1: 2, 2: 2, 3: 1}

    order = order_items(BALANCED, items, label_counts=counts, overlap=3)

    # chemistry first (0.5 → 1.0 after item 4, then 1.5 after item 3) before maths at 2.0.
    assert order == [4, 3, 1, 2]


def test_balanced_compares_coverage_per_item_not_raw_label_totals():
    items = [CandidateItem(i, "maths", "Cognitive") for i in range(1, 11)] + [
        CandidateItem(11, "physics", "Cognitive"),
        CandidateItem(12, "physics", "Cognitive"),
    ]
    # maths: 5 labels over 10 items = 0.5; physics: 2 labels over 2 items = 1.0. Raw totals would
    # wrongly favour physics (2 < 5).
    counts = {1: 1, 2: 1, 3: 1, 4: 1, 5: 1, 11: 1, 12: 1}

    order = order_items(BALANCED, items, label_counts=counts, overlap=3)

    assert order[0] in range(1, 11)


def test_balanced_counts_full_items_towards_coverage_but_never_offers_them():
    items = [
        CandidateItem(1, "maths", "Cognitive"),
        CandidateItem(2, "maths", "Cognitive"),
        CandidateItem(3, "physics", "Cognitive"),
        CandidateItem(4, "physics", "Cognitive"),
    ]
    # Item 1 is full: maths is at 2/2 = 1.0, physics at 0 → physics goes first and item 1 never appears.
    order = order_items(BALANCED, items, label_counts={1: 2}, overlap=2)

    assert order == [3, 4, 2]


def test_balanced_within_a_cell_takes_the_least_labelled_item_first():
    items = [CandidateItem(i, "maths", "Cognitive") for i in (1, 2, 3)]

    assert order_items(BALANCED, items, label_counts={1: 2, 2: 1}) == [3, 2, 1]


def test_balanced_cells_are_subject_by_category():
    # Same subject, different categories are different cells (and vice versa).
    items = [
        CandidateItem(1, "maths", "A"),
        CandidateItem(2, "maths", "A"),
        CandidateItem(3, "maths", "B"),
        CandidateItem(4, "physics", "A"),
    ]

    assert order_items(BALANCED, items)[:3] == [1, 3, 4]


def test_balanced_skips_labelled_items_but_keeps_their_labels_in_coverage():
    items = [
        CandidateItem(1, "maths", "Cognitive"),
        CandidateItem(2, "maths", "Cognitive"),
        CandidateItem(3, "physics", "Cognitive"),
    ]
    # The annotator labelled item 1 (count 1): maths at 1/2, physics at 0 → physics first.
    assert order_items(BALANCED, items, already_labelled=[1], label_counts={1: 1}) == [3, 2]
