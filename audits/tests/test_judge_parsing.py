"""The judge's output is parsed strictly, re-asked a bounded number of times, and never defaulted."""

import asyncio
import json

import pytest

from audits.judge import (
    METRICS,
    PARSE_FAILED,
    PARSE_OK,
    PARSE_UNPARSABLE,
    JudgeCallOutcome,
    JudgeOutputError,
    judge_messages,
    judge_turn,
    parse_judge_output,
)

VALID = {"mistake_recognize": 2, "answer_leakage": 0, "step_scaffolded": 1, "actionability": -1, "corrective_tone": 2}


def test_valid_object_is_accepted_with_extra_keys_ignored():
    assert parse_judge_output(json.dumps({**VALID, "rationale": "clear hint"})) == VALID


def test_json_inside_a_code_fence_is_accepted():
    assert parse_judge_output("```json\n" + json.dumps(VALID) + "\n```") == VALID


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        ("The tutor was helpful; I would give it a 2.", "not valid JSON"),
        (json.dumps(VALID)[:40], "not valid JSON"),  # truncated
        ("", "empty"),
        ("[1, 2, 3]", "not an object"),
        (json.dumps({k: v for k, v in VALID.items() if k != "corrective_tone"}), "'corrective_tone' is missing"),
        (json.dumps({**VALID, "answer_leakage": 3}), "answer_leakage=3 is not one of"),
        (json.dumps({**VALID, "actionability": "2"}), "actionability must be an integer"),
        (json.dumps({**VALID, "actionability": 1.5}), "actionability must be an integer"),
        (json.dumps({**VALID, "actionability": True}), "actionability must be an integer"),
        (json.dumps({**VALID, "mistake_recognize": -2}), "mistake_recognize=-2"),
    ],
)
def test_invalid_replies_are_rejected_with_the_reason(reply, problem):
    with pytest.raises(JudgeOutputError, match=problem):
        parse_judge_output(reply)


def test_prompt_contains_rubric_dialogue_and_turn():
    messages = judge_messages(
        template="Q=${question} A=${answer}\n${history}\nTURN: ${tutor_turn}",
        question="2+2?",
        answer="4",
        context=[("student", "is it 5?")],
        turn_text="Check again.",
    )
    assert messages == [{"role": "user", "content": "Q=2+2? A=4\nStudent: is it 5?\nTURN: Check again."}]


def _scripted(replies):
    asked = []

    async def call(messages, ask):
        asked.append(messages)
        reply = replies[ask]
        return JudgeCallOutcome(reply, call_id=100 + ask)

    return call, asked


def test_a_prose_reply_is_reasked_and_the_second_answer_used():
    call, asked = _scripted(["I think it's good.", json.dumps(VALID)])
    verdict = asyncio.run(judge_turn(turn_index=1, messages=[{"role": "user", "content": "rubric"}], call=call))
    assert verdict.status == PARSE_OK and verdict.scores == VALID and verdict.asks == 2
    assert verdict.call_ids == [100, 101]
    # The re-ask shows the model its bad reply and what was wrong with it.
    assert asked[1][1] == {"role": "assistant", "content": "I think it's good."}
    assert "not valid JSON" in asked[1][2]["content"]


def test_after_k_reasks_the_turn_is_unparsable_and_has_no_scores():
    call, asked = _scripted(["prose"] * 3)
    verdict = asyncio.run(judge_turn(turn_index=1, messages=[], call=call, max_reasks=2))
    assert verdict.status == PARSE_UNPARSABLE
    assert verdict.scores == {}  # never a default
    assert verdict.raw == "prose" and len(asked) == 3


def test_a_failed_call_is_recorded_as_failed_not_reasked():
    async def call(messages, ask):
        return JudgeCallOutcome(None, call_id=7, error="HTTP 500")

    verdict = asyncio.run(judge_turn(turn_index=3, messages=[], call=call))
    assert verdict.status == PARSE_FAILED and verdict.asks == 1 and verdict.problem == "HTTP 500"


def test_metrics_are_the_five_of_the_rubric():
    assert METRICS == ("mistake_recognize", "answer_leakage", "step_scaffolded", "actionability", "corrective_tone")
