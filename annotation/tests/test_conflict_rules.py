"""Cross-stage conflicts (positive early, negative later) and the count of their dispositions."""

import pytest

from annotation.workflow.conflict_rules import (
    REMOVED,
    RETAINED_WITH_FLAG,
    CrossStageConflict,
    count_dispositions,
    find_conflicts,
)

# SafeTutors: stage 1 asks whether the question is valid, stage 2 whether the interaction instantiates
# its risk category (aligned) or not (misaligned); stage 3 repeats stage 2's judgement in plain language.
POSITIVE = {1: {"valid"}, 2: {"aligned"}, 3: {"yes"}}


def test_valid_at_stage_1_and_misaligned_at_stage_2_is_a_conflict():
    final = {
        ("q1", 1): "valid",
        ("q1", 2): "misaligned",
        ("q2", 1): "valid",
        ("q2", 2): "aligned",
    }

    assert find_conflicts(final, POSITIVE) == [
        CrossStageConflict(
            item_id="q1", positive_stage=1, positive_value="valid", negative_stage=2, negative_value="misaligned"
        )
    ]


def test_negative_first_then_positive_is_not_a_conflict():
    final = {("q1", 1): "invalid", ("q1", 2): "aligned"}

    assert find_conflicts(final, POSITIVE) == []


def test_negative_at_every_stage_or_positive_at_every_stage_is_not_a_conflict():
    final = {("q1", 1): "invalid", ("q1", 2): "misaligned", ("q2", 1): "valid", ("q2", 2): "aligned"}

    assert find_conflicts(final, POSITIVE) == []


def test_unresolved_stages_are_not_judged():
    final = {("q1", 1): "valid", ("q1", 2): None, ("q2", 1): None, ("q2", 2): "misaligned"}

    assert find_conflicts(final, POSITIVE) == []


def test_a_conflict_across_non_adjacent_stages_is_found():
    final = {("q1", 1): "valid", ("q1", 3): "no"}

    (conflict,) = find_conflicts(final, POSITIVE)

    assert (conflict.positive_stage, conflict.negative_stage) == (1, 3)


def test_one_conflict_per_item_earliest_positive_with_first_later_negative():
    final = {("q1", 3): "no", ("q1", 2): "misaligned", ("q1", 1): "valid"}

    (conflict,) = find_conflicts(final, POSITIVE)

    assert (conflict.positive_stage, conflict.negative_stage, conflict.negative_value) == (1, 2, "misaligned")


def test_the_explicit_stage_order_is_used_not_the_sorted_keys():
    positive = {"risk": {"aligned"}, "validity": {"valid"}}
    final = {("q1", "validity"): "valid", ("q1", "risk"): "misaligned"}

    assert len(find_conflicts(final, positive, stage_order=["validity", "risk"])) == 1
    # Sorted keys would put "risk" first, where the item is negative: no conflict in that order.
    assert find_conflicts(final, positive) == []


def test_named_negatives_leave_other_values_neutral():
    negative = {2: {"misaligned"}}
    final = {("q1", 1): "valid", ("q1", 2): "not applicable", ("q2", 1): "valid", ("q2", 2): "misaligned"}

    conflicts = find_conflicts(final, POSITIVE, negative_values=negative)

    assert [c.item_id for c in conflicts] == ["q2"]


def test_without_named_negatives_every_other_value_is_negative():
    final = {("q1", 1): "valid", ("q1", 2): "not applicable"}

    assert [c.item_id for c in find_conflicts(final, POSITIVE)] == ["q1"]


def test_conflicts_come_in_the_order_items_first_appear():
    final = {("b", 1): "valid", ("a", 1): "valid", ("a", 2): "misaligned", ("b", 2): "misaligned"}

    assert [c.item_id for c in find_conflicts(final, POSITIVE)] == ["b", "a"]


def test_a_stage_without_positive_values_or_order_is_refused():
    with pytest.raises(ValueError, match="stage_order"):
        find_conflicts({("q1", 4): "valid"}, POSITIVE)
    with pytest.raises(ValueError, match="positive values"):
        find_conflicts({("q1", 4): "valid"}, POSITIVE, stage_order=[1, 2, 3, 4])


def test_paper_scale_57_conflicts_in_1500_items():
    # 1,500 items; items 0–56 valid at stage 1 but misaligned at stage 2 (57 conflicts); the rest agree
    # or were invalid at stage 1 already.
    final = {}
    for item in range(1500):
        if item < 57:
            final[(item, 1)], final[(item, 2)] = "valid", "misaligned"
        elif item < 1400:
            final[(item, 1)], final[(item, 2)] = "valid", "aligned"
        else:
            final[(item, 1)], final[(item, 2)] = "invalid", "misaligned"

    conflicts = find_conflicts(final, POSITIVE)

    assert [c.item_id for c in conflicts] == list(range(57))


# --- dispositions -----------------------------------------------------------------------------------------


def test_the_papers_disposition_sentence():
    # SafeTutors Appendix D: 57 cross-stage conflicts, 21 removed and 36 retained with a flag.
    counts = count_dispositions([REMOVED] * 21 + [RETAINED_WITH_FLAG] * 36)

    assert (counts.conflicts, counts.removed, counts.retained_with_flag, counts.undecided) == (57, 21, 36, 0)
    assert counts.describe() == "57 conflicts: 21 removed, 36 retained"


def test_the_sentence_with_the_number_of_items():
    counts = count_dispositions([REMOVED] * 21 + [RETAINED_WITH_FLAG] * 36, n_items=1500)

    assert counts.describe() == "57 conflicts in 1,500 items (3.8%): 21 removed, 36 retained"


def test_undecided_conflicts_are_counted_and_shown():
    counts = count_dispositions([REMOVED, None, RETAINED_WITH_FLAG, None])

    assert counts.undecided == 2
    assert counts.describe() == "4 conflicts: 1 removed, 1 retained, 2 undecided"


def test_a_single_conflict_and_none():
    assert count_dispositions([REMOVED]).describe() == "1 conflict: 1 removed, 0 retained"
    assert count_dispositions([]).describe() == "0 conflicts: 0 removed, 0 retained"


def test_an_unknown_disposition_is_refused():
    with pytest.raises(ValueError, match="disposition"):
        count_dispositions(["deleted"])
