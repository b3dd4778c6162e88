"""The blindness rule alone (`workflow.blindness`, no database): an annotator sees other annotators' labels
only in a discussion stage, once all N labels are in, while the item is disputed and its discussion open,
and then only the disputed questions under pseudonyms that are the same for every viewer; moderators see
everything; comment authors are named the way the answers are."""

import pytest

from annotation.workflow.blindness import (
    MODERATOR_NAME,
    OTHER_NAME,
    ItemFacts,
    author_name,
    discussion_visibility,
    norming_author_name,
    norming_thread_names,
    pseudonyms,
)

A, B, C, OUTSIDER, MOD = 11, 22, 33, 44, 99

OPEN = ItemFacts(
    discussion_policy=True,
    overlap=2,
    annotators=(B, A),  # B submitted first
    disputed=("q2",),
    in_discussion=True,
    discussion_open=True,
)


def facts(**changes) -> ItemFacts:
    return ItemFacts(**{**OPEN.__dict__, **changes})


def test_an_annotator_of_an_open_disputed_item_sees_the_disputed_questions_under_pseudonyms():
    seen = discussion_visibility(viewer_id=A, viewer_is_moderator=False, facts=OPEN)
    assert seen is not None and not seen.full
    assert seen.questions == ("q2",)
    assert seen.shows_question("q2") and not seen.shows_question("q1")  # q1 was settled
    assert dict(seen.names) == {B: "Annotator 1", A: "Annotator 2"}
    assert seen.is_viewer(A) and not seen.is_viewer(B)
    assert seen.may_comment and seen.may_revise


def test_names_are_the_same_whoever_looks():
    names = [dict(discussion_visibility(viewer_id=v, viewer_is_moderator=False, facts=OPEN).names) for v in (A, B)]
    assert names[0] == names[1] == pseudonyms((B, A))


@pytest.mark.parametrize(
    ("why", "changes"),
    [
        ("a majority stage never discusses", {"discussion_policy": False}),
        ("waiting for the last label", {"overlap": 3}),
        ("a settled item", {"in_discussion": False, "disputed": ()}),
        ("at the senior reviewer", {"in_discussion": False}),
        ("the discussion is closed", {"discussion_open": False}),
        ("nothing left disputed", {"disputed": ()}),
    ],
)
def test_annotators_see_nothing_otherwise(why, changes):
    assert discussion_visibility(viewer_id=A, viewer_is_moderator=False, facts=facts(**changes)) is None, why


def test_an_annotator_who_did_not_label_the_item_sees_nothing():
    assert discussion_visibility(viewer_id=OUTSIDER, viewer_is_moderator=False, facts=OPEN) is None


def test_an_annotator_who_has_not_submitted_sees_nothing_even_if_the_others_have():
    three = facts(overlap=3, annotators=(B, C))
    assert discussion_visibility(viewer_id=A, viewer_is_moderator=False, facts=three) is None
    assert discussion_visibility(viewer_id=B, viewer_is_moderator=False, facts=three) is None


@pytest.mark.parametrize(
    "changes", [{}, {"discussion_policy": False}, {"overlap": 3}, {"discussion_open": False, "in_discussion": False}]
)
def test_moderators_see_everything(changes):
    seen = discussion_visibility(viewer_id=MOD, viewer_is_moderator=True, facts=facts(**changes))
    assert seen is not None and seen.full
    assert seen.questions is None and seen.shows_question("q1") and seen.shows_question("q2")
    assert seen.may_comment == facts(**changes).discussion_open
    assert not seen.may_revise  # a moderator who did not label the item has no answer to revise


def test_comment_authors_are_named_like_the_answers():
    seen = discussion_visibility(viewer_id=A, viewer_is_moderator=False, facts=OPEN)
    assert author_name(seen, author_id=B, username="bob", author_is_moderator=False) == "Annotator 1"
    assert author_name(seen, author_id=A, username="alice", author_is_moderator=False) == "Annotator 2"
    assert author_name(seen, author_id=MOD, username="mod", author_is_moderator=True) == MODERATOR_NAME
    assert author_name(seen, author_id=OUTSIDER, username="eve", author_is_moderator=False) == OTHER_NAME
    full = discussion_visibility(viewer_id=MOD, viewer_is_moderator=True, facts=OPEN)
    assert author_name(full, author_id=B, username="bob", author_is_moderator=False) == "bob"


def test_norming_authors_are_pseudonyms_to_annotators_and_usernames_to_moderators():
    names = norming_thread_names(viewer_id=A, viewer_is_moderator=False, authors=[C, A, C])
    assert norming_author_name(names, author_id=C, username="carol", author_is_moderator=False) == "Annotator 1"
    assert norming_author_name(names, author_id=A, username="alice", author_is_moderator=False) == "Annotator 2"
    assert norming_author_name(names, author_id=MOD, username="mod", author_is_moderator=True) == MODERATOR_NAME
    moderator_view = norming_thread_names(viewer_id=MOD, viewer_is_moderator=True, authors=[C])
    assert norming_author_name(moderator_view, author_id=C, username="carol", author_is_moderator=False) == "carol"
