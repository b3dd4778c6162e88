"""The answer type, its parsing from a form and an API body, and the answer rules, on plain objects
(`annotation.workflow.answers` needs no database)."""

from dataclasses import dataclass, field

import pytest

from annotation.workflow.answers import (
    NOT_APPLICABLE,
    UNSURE_FIELD_VALUE,
    Answer,
    LabelInvalid,
    answer_from_form,
    answers_from_json,
    answers_validate,
    post_discussion_answers_validate,
)


@dataclass
class Question:
    key: str
    values: list[str]
    allow_unsure: bool = False
    allow_not_applicable: bool = False
    justification_required_for: list[str] = field(default_factory=list)

    def choice_label(self, value: str) -> str:
        return value.upper()


def test_a_form_posts_a_value_unsure_or_nothing():
    assert answer_from_form(" yes ", "because") == Answer(value="yes", justification="because")
    assert answer_from_form(UNSURE_FIELD_VALUE) == Answer(value=None, unsure=True)
    assert answer_from_form("") == Answer() == answer_from_form(None)


def test_an_api_body_gives_each_field_optionally():
    parsed = answers_from_json({"q": {"value": "no"}, "r": {"unsure": True, "value": ""}, "s": {}})
    assert parsed == {"q": Answer(value="no"), "r": Answer(value=None, unsure=True), "s": Answer()}


def test_a_label_stores_an_unsure_answer_as_an_empty_value_and_the_justification_trimmed():
    assert Answer(value=None, unsure=True, justification=" x ").stored_value == ""
    assert Answer(value="yes", justification=" x ").stored_justification == "x"


def test_every_question_needs_a_valid_answer():
    questions = [
        Question("q", ["yes", "no"], justification_required_for=["no"]),
        Question("r", ["a", "b"], allow_not_applicable=False),
    ]
    with pytest.raises(LabelInvalid) as refused:
        answers_validate(
            questions, {"q": Answer(value="no"), "r": Answer(value=NOT_APPLICABLE), "z": Answer()}, unsure_enabled=True
        )
    assert set(refused.value.errors) == {"q", "r", "z"}
    assert "needs a justification" in refused.value.errors["q"]
    answers = {"q": Answer(value="no", justification="why"), "r": Answer(value="a")}
    assert answers_validate(questions, answers, unsure_enabled=False) is answers


def test_unsure_needs_both_the_question_and_the_stage_to_allow_it():
    question = Question("q", ["yes"], allow_unsure=True)
    answers_validate([question], {"q": Answer(unsure=True)}, unsure_enabled=True)
    with pytest.raises(LabelInvalid):
        answers_validate([question], {"q": Answer(unsure=True)}, unsure_enabled=False)


def test_post_discussion_answers_only_to_the_disputed_questions():
    disputed = {"q": Question("q", ["yes", "no"])}
    post_discussion_answers_validate(disputed, {"q": Answer(value="yes")}, unsure_enabled=False)
    post_discussion_answers_validate(disputed, {}, unsure_enabled=False)
    with pytest.raises(LabelInvalid) as refused:
        post_discussion_answers_validate(disputed, {"r": Answer(value="yes")}, unsure_enabled=False)
    assert refused.value.errors == {"r": "not a question under discussion"}
