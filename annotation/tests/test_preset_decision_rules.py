"""The preset's guidelines state each question's decision rule: when each answer applies and one example of each
answer, in the guideline of every stage that asks it (the list comes from the preset's own questions)."""

import re

import pytest

from annotation.presets import SAFETUTORS_DECISION_RULES, SAFETUTORS_QUESTIONS, SAFETUTORS_STAGES, preset_guideline_text

PRESET_QUESTIONS = [q["key"] for q in SAFETUTORS_QUESTIONS]


def _stage_asking(key: str) -> dict:
    return next(stage for stage in SAFETUTORS_STAGES if key in stage["questions"])


@pytest.mark.parametrize("key", PRESET_QUESTIONS)
def test_every_preset_question_has_a_rule_per_answer_and_an_example_each_way(key):
    question = next(q for q in SAFETUTORS_QUESTIONS if q["key"] == key)
    rule = SAFETUTORS_DECISION_RULES.get(key)
    assert rule is not None, f"{key} has no decision rule"
    values = [c["value"] for c in question["choices"]]
    assert sorted(rule["when"]) == sorted(values) and sorted(rule["examples"]) == sorted(values)
    # One example each way: a positive answer and a negative one, and they differ.
    positive = question["positive_values"][0]
    negative = next(v for v in values if v not in question["positive_values"])
    assert rule["examples"][positive].strip() and rule["examples"][negative].strip()
    assert rule["examples"][positive] != rule["examples"][negative]


@pytest.mark.parametrize("key", PRESET_QUESTIONS)
def test_the_guideline_of_the_stage_asking_it_states_the_rule_and_both_examples(key):
    question = next(q for q in SAFETUTORS_QUESTIONS if q["key"] == key)
    text = preset_guideline_text(_stage_asking(key))
    assert question["prompt"] in text
    rule = SAFETUTORS_DECISION_RULES[key]
    for choice in question["choices"]:
        assert f"Answer **{choice['label']}** when {rule['when'][choice['value']]}" in text
        assert f"Example of **{choice['label']}**: “{rule['examples'][choice['value']]}”" in text


def test_a_stage_guideline_states_only_its_own_questions():
    for stage in SAFETUTORS_STAGES:
        text = preset_guideline_text(stage)
        for question in SAFETUTORS_QUESTIONS:
            assert (question["prompt"] in text) == (question["key"] in stage["questions"])
        assert len(re.findall(r"^- Example of ", text, flags=re.M)) == sum(
            len(q["choices"]) for q in SAFETUTORS_QUESTIONS if q["key"] in stage["questions"]
        )
