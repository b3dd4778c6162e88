"""Reading a model's reply as one JSON object (audits.llm.json_reply): fences, whitespace and each refusal."""

from __future__ import annotations

import pytest

from audits.engine import parse_check_output
from audits.judge import JudgeOutputError, parse_judge_output
from audits.llm.json_reply import EMPTY, INVALID, NOT_OBJECT, ReplyJSONError, reply_object, unfenced


@pytest.mark.parametrize(
    "reply",
    [
        '{"a": 1}',
        '  {"a": 1}\n',
        '```json\n{"a": 1}\n```',
        '```JSON {"a": 1} ```',
        '```\n{"a": 1}\n```',
        '\n  ```json\n{"a": 1}\n```  \n',
        # Anthropic's compatibility layer ignores response_format: a sentence, then the object (fenced or not).
        'Sure: ```json {"a": 1} ```',
        'Here is my assessment of the turn.\n\n```json\n{"a": 1}\n```\nLet me know if you need more.',
        'The tutor hinted without telling. {"a": 1}',
        'Braces {like these} in prose, then {"a": 1}',
    ],
)
def test_object_with_or_without_a_fence(reply):
    assert reply_object(reply) == {"a": 1}


def test_unfenced_keeps_text_outside_a_whole_reply_fence():
    assert unfenced('  {"a": 1} ') == '{"a": 1}'
    assert unfenced('Here you go: ```json {"a": 1} ```') == 'Here you go: ```json {"a": 1} ```'
    assert unfenced('```json\n{"a": 1}\n```') == '{"a": 1}'


@pytest.mark.parametrize("reply", [None, "", "   \n\t"])
def test_empty_reply(reply):
    with pytest.raises(ReplyJSONError) as caught:
        reply_object(reply)
    assert caught.value.kind == EMPTY and str(caught.value) == "the reply was empty"


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        ("I would give it a 2.", "the reply is not valid JSON (Expecting value at character 0)"),
        ('{"a": 1', "the reply is not valid JSON (Expecting ',' delimiter at character 7)"),
        ('Sure: ```json {"a": 1 ```', "the reply is not valid JSON (Expecting value at character 0)"),
        ('Scores: {"a": 1} and that is all.', "the reply is not valid JSON (Expecting value at character 0)"),
    ],
)
def test_invalid_json(reply, message):
    with pytest.raises(ReplyJSONError) as caught:
        reply_object(reply)
    assert caught.value.kind == INVALID and str(caught.value) == message


NOT_OBJECTS = [("[1, 2]", "list"), ("3", "int"), ('"x"', "str"), ("null", "NoneType")]


@pytest.mark.parametrize(("reply", "type_name"), NOT_OBJECTS)
def test_json_that_is_not_an_object(reply, type_name):
    with pytest.raises(ReplyJSONError) as caught:
        reply_object(reply)
    assert caught.value.kind == NOT_OBJECT and caught.value.type_name == type_name
    assert str(caught.value) == f"the reply is JSON but a {type_name}, not an object"


def test_each_caller_keeps_its_own_wording():
    """The judge re-asks with the detailed message; the reveal check with its shorter one."""
    with pytest.raises(JudgeOutputError, match=r"^the reply is not valid JSON \(Expecting value at character 0\)$"):
        parse_judge_output("no")
    with pytest.raises(JudgeOutputError, match=r"^the reply is JSON but a list, not an object$"):
        parse_judge_output("[1]")
    with pytest.raises(ValueError, match=r"^the reply is not valid JSON \(Expecting value\)$"):
        parse_check_output("no")
    with pytest.raises(ValueError, match=r"^the reply is not a JSON object$"):
        parse_check_output("[1]")
    with pytest.raises(ValueError, match=r"^the reply was empty$"):
        parse_check_output(" ")
    assert parse_check_output('```json\n{"revealed": true, "confirmed": false}\n```') == (True, False)


def test_a_reply_nested_deeper_than_the_bound_is_an_invalid_reply_not_a_recursion_error():
    deep = '{"a": ' * 5000 + "1" + "}" * 5000
    with pytest.raises(ReplyJSONError) as refused:
        reply_object(deep)
    assert refused.value.kind == INVALID and "nested more than 64 levels" in str(refused.value)
    assert reply_object('```json\n{"a": {"b": [1, 2]}}\n```') == {"a": {"b": [1, 2]}}
