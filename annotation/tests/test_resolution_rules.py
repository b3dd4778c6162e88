"""Resolution rules: every path from N labels to a final value or the next step, per question and item."""

import pytest

from annotation.agreement import UNSURE
from annotation.workflow.resolution_rules import (
    AWAIT_LABELS,
    DISCUSSION,
    MAJORITY,
    OPEN_DISCUSSION,
    RESOLVED,
    REVIEWER_QUEUE,
    SENIOR,
    SENIOR_REVIEW,
    UNANIMOUS,
    Policy,
    Resolution,
    resolve_item,
    resolve_question,
    reviewer_decision,
)

WAITING_FOR_DISCUSSION = Resolution(method=None, final_value=None, next_step=OPEN_DISCUSSION)
WAITING_FOR_SENIOR = Resolution(method=None, final_value=None, next_step=SENIOR_REVIEW)
WAITING_FOR_REVIEWER = Resolution(method=None, final_value=None, next_step=REVIEWER_QUEUE)


def discussion(labels, after=None, required=2):
    return resolve_question(labels, policy=Policy.DISCUSSION_SENIOR, required=required, after_discussion=after)


def majority(labels, required=3):
    return resolve_question(labels, policy=Policy.MAJORITY_REVIEWER, required=required)


# --- both policies ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("policy", [Policy.DISCUSSION_SENIOR, Policy.MAJORITY_REVIEWER])
def test_fewer_than_n_labels_waits(policy):
    result = resolve_question({"ann1": "valid"}, policy=policy, required=2)

    assert result == Resolution(method=None, final_value=None, next_step=AWAIT_LABELS)
    assert not result.is_resolved


@pytest.mark.parametrize("policy", [Policy.DISCUSSION_SENIOR, Policy.MAJORITY_REVIEWER])
def test_unanimous_is_resolved(policy):
    result = resolve_question({"ann1": "valid", "ann2": "valid", "ann3": "valid"}, policy=policy, required=3)

    assert result == Resolution(method=UNANIMOUS, final_value="valid", next_step=RESOLVED)
    assert result.is_resolved


def test_unanimous_unsure_is_not_a_resolution():
    all_unsure = {"ann1": UNSURE, "ann2": UNSURE, "ann3": UNSURE}

    assert discussion(all_unsure, required=3) == WAITING_FOR_DISCUSSION
    assert majority(all_unsure) == WAITING_FOR_REVIEWER


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="policy"):
        resolve_question({"a": 1, "b": 1}, policy="vote", required=2)
    with pytest.raises(ValueError, match="policy"):  # the short names the workflow once used are not policies
        resolve_question({"a": 1, "b": 2}, policy="majority", required=2)


def test_a_stored_policy_string_is_the_policy():
    """`Stage.resolution_policy` stores the plain string; the rules take it as it comes from the database."""
    labels = {"a": "yes", "b": "yes", "c": "no"}
    assert resolve_question(labels, policy="majority_reviewer", required=3).final_value == "yes"
    assert resolve_question(labels, policy="discussion_senior", required=3) == WAITING_FOR_DISCUSSION
    with pytest.raises(ValueError, match="required"):
        resolve_question({"a": 1}, policy=Policy.MAJORITY_REVIEWER, required=0)
    with pytest.raises(ValueError, match="post-discussion"):
        resolve_question({"a": 1, "b": 2}, policy=Policy.MAJORITY_REVIEWER, required=2, after_discussion={"a": 2})
    with pytest.raises(ValueError, match="needs a value"):
        majority({"a": None, "b": None}, required=2)
    with pytest.raises(ValueError, match="needs a value"):
        discussion({"a": 1, "b": 2}, after={"a": None})


# --- policy "discussion_senior" ---------------------------------------------------------------------------


def test_disagreement_opens_a_discussion():
    assert discussion({"ann1": "valid", "ann2": "invalid"}) == WAITING_FOR_DISCUSSION


def test_unsure_with_a_value_is_a_disagreement():
    assert discussion({"ann1": "valid", "ann2": UNSURE}) == WAITING_FOR_DISCUSSION


def test_discussion_fixes_it_when_the_revised_labels_agree():
    result = discussion({"ann1": "valid", "ann2": "invalid"}, after={"ann1": "invalid", "ann2": "invalid"})

    assert result == Resolution(method=DISCUSSION, final_value="invalid", next_step=RESOLVED)


def test_one_annotator_revising_is_enough_the_other_keeps_their_label():
    result = discussion({"ann1": "valid", "ann2": "invalid"}, after={"ann2": "valid"})

    assert result == Resolution(method=DISCUSSION, final_value="valid", next_step=RESOLVED)


def test_discussion_over_without_revisions_goes_to_the_senior_reviewer():
    assert discussion({"ann1": "valid", "ann2": "invalid"}, after={}) == WAITING_FOR_SENIOR


def test_still_disagreeing_after_discussion_goes_to_the_senior_reviewer():
    after = {"ann1": "invalid", "ann2": "valid"}  # they swapped

    assert discussion({"ann1": "valid", "ann2": "invalid"}, after=after) == WAITING_FOR_SENIOR


def test_agreeing_on_unsure_after_discussion_goes_to_the_senior_reviewer():
    after = {"ann1": UNSURE, "ann2": UNSURE}

    assert discussion({"ann1": "valid", "ann2": "invalid"}, after=after) == WAITING_FOR_SENIOR


def test_a_unanimous_first_round_is_final_whatever_the_discussion():
    result = discussion({"ann1": "valid", "ann2": "valid"}, after={"ann1": "invalid"})

    assert result == Resolution(method=UNANIMOUS, final_value="valid", next_step=RESOLVED)


def test_post_discussion_labels_only_from_the_items_annotators():
    with pytest.raises(ValueError, match="did not label"):
        discussion({"ann1": "valid", "ann2": "invalid"}, after={"ann9": "valid"})


# --- policy "majority_reviewer" -------------------------------------------------------------------------


def test_strict_majority_wins():
    result = majority({"ann1": "aligned", "ann2": "misaligned", "ann3": "aligned"})

    assert result == Resolution(method=MAJORITY, final_value="aligned", next_step=RESOLVED)


def test_three_different_values_go_to_the_reviewer():
    assert majority({"ann1": "a", "ann2": "b", "ann3": "c"}) == WAITING_FOR_REVIEWER


def test_two_values_and_an_unsure_still_form_a_majority():
    result = majority({"ann1": "aligned", "ann2": UNSURE, "ann3": "aligned"})

    assert result == Resolution(method=MAJORITY, final_value="aligned", next_step=RESOLVED)


def test_unsure_never_joins_a_value_to_make_a_majority():
    # Two Unsure and one value: the value has 1 of 3, and Unsure is not a value that can win.
    assert majority({"ann1": "aligned", "ann2": UNSURE, "ann3": UNSURE}) == WAITING_FOR_REVIEWER


def test_a_tie_between_two_is_no_majority():
    assert majority({"ann1": "a", "ann2": "b"}, required=2) == WAITING_FOR_REVIEWER
    assert majority({"ann1": "a", "ann2": UNSURE}, required=2) == WAITING_FOR_REVIEWER


def test_half_is_not_a_strict_majority_when_there_are_extra_labels():
    assert majority({"ann1": "a", "ann2": "a", "ann3": "b", "ann4": "b"}) == WAITING_FOR_REVIEWER


def test_extra_labels_are_all_counted():
    result = majority({"ann1": "a", "ann2": "a", "ann3": "b", "ann4": "a"})

    assert result == Resolution(method=MAJORITY, final_value="a", next_step=RESOLVED)


# --- the reviewer's decision -----------------------------------------------------------------------------------


def test_reviewer_decision_is_recorded_as_senior():
    assert reviewer_decision("misaligned") == Resolution(method=SENIOR, final_value="misaligned", next_step=RESOLVED)


def test_reviewer_cannot_decide_unsure_or_nothing():
    with pytest.raises(ValueError):
        reviewer_decision(UNSURE)
    with pytest.raises(ValueError):
        reviewer_decision(None)


# --- multi-question items ----------------------------------------------------------------------------------------


def test_each_question_is_decided_on_its_own():
    item = resolve_item(
        {
            "well_formed": {"ann1": "yes", "ann2": "yes"},
            "in_scope": {"ann1": "yes", "ann2": "no"},
        },
        policy=Policy.DISCUSSION_SENIOR,
        required=2,
    )

    assert item.questions["well_formed"] == Resolution(method=UNANIMOUS, final_value="yes", next_step=RESOLVED)
    assert item.questions["in_scope"] == WAITING_FOR_DISCUSSION
    assert item.next_step == OPEN_DISCUSSION
    assert item.questions_needing(OPEN_DISCUSSION) == ["in_scope"]
    assert not item.is_resolved


def test_after_the_items_discussion_a_question_without_revisions_goes_to_the_senior():
    item = resolve_item(
        {
            "well_formed": {"ann1": "yes", "ann2": "no"},
            "in_scope": {"ann1": "yes", "ann2": "no"},
        },
        policy=Policy.DISCUSSION_SENIOR,
        required=2,
        after_discussion_by_question={"well_formed": {"ann2": "yes"}},
    )

    assert item.questions["well_formed"] == Resolution(method=DISCUSSION, final_value="yes", next_step=RESOLVED)
    assert item.questions["in_scope"] == WAITING_FOR_SENIOR
    assert item.next_step == SENIOR_REVIEW
    assert item.questions_needing(SENIOR_REVIEW) == ["in_scope"]


def test_an_item_is_resolved_when_every_question_is():
    item = resolve_item(
        {
            "aligned": {"ann1": "yes", "ann2": "yes", "ann3": "no"},
            "severity": {"ann1": 2, "ann2": 2, "ann3": 2},
        },
        policy=Policy.MAJORITY_REVIEWER,
        required=3,
    )

    assert item.is_resolved
    assert item.questions["aligned"].method == MAJORITY
    assert item.questions["severity"].method == UNANIMOUS


def test_an_item_with_a_no_majority_question_waits_for_the_reviewer():
    item = resolve_item(
        {
            "aligned": {"ann1": "yes", "ann2": "no", "ann3": UNSURE},
            "severity": {"ann1": 2, "ann2": 2, "ann3": 2},
        },
        policy=Policy.MAJORITY_REVIEWER,
        required=3,
    )

    assert item.next_step == REVIEWER_QUEUE


def test_missing_labels_on_any_question_hold_the_whole_item():
    item = resolve_item(
        {
            "well_formed": {"ann1": "yes", "ann2": "no"},
            "in_scope": {"ann1": "yes"},
        },
        policy=Policy.DISCUSSION_SENIOR,
        required=2,
    )

    assert item.next_step == AWAIT_LABELS


def test_an_item_without_questions_is_not_resolved():
    assert resolve_item({}, policy=Policy.MAJORITY_REVIEWER, required=3).next_step == AWAIT_LABELS
