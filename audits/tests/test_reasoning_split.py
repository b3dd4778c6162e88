"""A reply is split into the visible text and the reasoning, in every form servers send it (audits.llm.reasoning).

The forms are those documented by the servers (docs/DOMAIN.md, "Real model servers"): vLLM's and SGLang's
`reasoning_content`, vLLM ≥ 0.11's, Ollama's and OpenRouter's `reasoning`, `<think>` blocks in the content,
DeepSeek-R1-Distill's tag-less form (its chat template opens the block in the prompt), and a block the token
budget cut off.
"""

from __future__ import annotations

import pytest

from audits.llm.calls import EndpointConfig, PermanentError
from audits.llm.completion_reply import MalformedReply, reply_from_completion
from audits.llm.reasoning import REASONING_FIELD, REASONING_NONE, REASONING_TAGS, ReasoningSplit, split_reasoning

THOUGHT = "The student wrote 12; 7 + 5 = 12, so the answer is 12. I should not say it."
REPLY = "What do you get when you add the ones first?"


@pytest.mark.parametrize(
    ("content", "field", "source"),
    [
        (REPLY, THOUGHT, "field"),
        (f"<think>\n{THOUGHT}\n</think>\n\n{REPLY}", None, "tags"),
        (f"<THINKING>{THOUGHT}</THINKING>{REPLY}", None, "tags"),
        (f"{THOUGHT}\n</think>\n\n{REPLY}", None, "tags"),  # R1-Distill: no opening tag
        (f"<think>{THOUGHT}</think>\n<think>{THOUGHT}</think>\n{REPLY}", None, "tags"),
    ],
)
def test_only_the_reply_is_visible(content, field, source):
    split = split_reasoning(content, field)
    assert split.visible == REPLY
    assert THOUGHT in split.reasoning and "think>" not in split.reasoning.lower()
    assert split.source == source and not split.unclosed
    # Only R1-Distill's lone closing tag says the chat template opened the block.
    assert split.opened_in_prompt == content.startswith(THOUGHT)


def test_reasoning_cut_off_by_the_budget_leaves_no_reply():
    split = split_reasoning(f"<think>\n{THOUGHT} Let me check the carry", None)
    assert split.visible == "" and split.unclosed and split.reasoning.startswith(THOUGHT)
    # The R1-Distill form cut off before its </think>: no tag at all. "auto" cannot tell it from a reply...
    assert split_reasoning(THOUGHT, None, cut_off=True).visible == THOUGHT
    # ...an endpoint set to "tags" (the template may open the block) reads it as reasoning, with no reply.
    assert split_reasoning(THOUGHT, None, REASONING_TAGS, cut_off=True) == ReasoningSplit(
        visible="", reasoning=THOUGHT, source="tags", unclosed=True
    )
    # Not cut off, or cut off after </think>: what follows the tag is the reply.
    assert split_reasoning(REPLY, None, REASONING_TAGS).visible == REPLY
    late = split_reasoning(f"{THOUGHT}\n</think>\n{REPLY} And", None, REASONING_TAGS, cut_off=True)
    assert (late.visible, late.reasoning, late.unclosed) == (f"{REPLY} And", THOUGHT, False)


def test_a_field_and_tags_together_keep_both_pieces():
    split = split_reasoning(f"<think>second</think>{REPLY}", "first")
    assert split.visible == REPLY and split.reasoning == "first\n\nsecond" and split.source == "field+tags"


def test_the_endpoint_setting_decides_what_is_read():
    tagged = f"<think>{THOUGHT}</think>{REPLY}"
    assert split_reasoning(tagged, THOUGHT, REASONING_NONE).visible == tagged
    assert split_reasoning(tagged, THOUGHT, REASONING_NONE).reasoning == ""
    # "field": the field is the reasoning and the reply is taken as it comes, tags and all.
    assert split_reasoning(tagged, "f", REASONING_FIELD) == ReasoningSplit(
        visible=tagged, reasoning="f", source="field"
    )
    assert split_reasoning(tagged, "f", REASONING_TAGS).reasoning == THOUGHT


def _completion(message: dict, finish_reason: str = "stop", usage: dict | None = None) -> dict:
    return {
        "id": "x",
        "object": "chat.completion",
        "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", **message}, "finish_reason": finish_reason}],
        "usage": usage or {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


ENDPOINT = EndpointConfig(key="e", provider="openai", model="m", max_tokens=300)


def test_a_completion_yields_the_reply_its_reasoning_and_reasoning_tokens():
    usage = {
        "prompt_tokens": 10,
        "completion_tokens": 250,
        "total_tokens": 260,
        "completion_tokens_details": {"reasoning_tokens": 200},
    }
    reply = reply_from_completion(_completion({"content": REPLY, "reasoning": THOUGHT}, usage=usage), ENDPOINT)
    assert (reply.text, reply.reasoning, reply.reasoning_tokens, reply.completion_tokens) == (REPLY, THOUGHT, 200, 250)
    assert reply.finish_reason == "stop" and reply.reasoning_source == "field"


def test_a_used_up_budget_is_permanent_names_its_cause_and_keeps_the_billed_tokens():
    usage = {"prompt_tokens": 40, "completion_tokens": 300, "completion_tokens_details": {"reasoning_tokens": 300}}
    for message in ({"content": ""}, {"content": None, "reasoning_content": THOUGHT}, {"content": "<think>half"}):
        with pytest.raises(PermanentError) as caught:
            reply_from_completion(_completion(message, "length", usage), ENDPOINT)
        assert "whole budget of 300 tokens" in str(caught.value) and "300 of them reasoning" in str(caught.value)
        assert caught.value.usage.completion_tokens == 300 and caught.value.usage.prompt_tokens == 40


def test_a_tag_less_reply_cut_off_on_a_tags_endpoint_is_a_used_up_budget():
    endpoint = EndpointConfig(key="r1", provider="openai", model="m", max_tokens=300, reasoning_format=REASONING_TAGS)
    usage = {"prompt_tokens": 40, "completion_tokens": 300}
    with pytest.raises(PermanentError) as caught:
        reply_from_completion(_completion({"content": THOUGHT}, "length", usage), endpoint)
    assert "whole budget of 300 tokens" in str(caught.value) and THOUGHT not in str(caught.value)
    assert caught.value.reasoning == THOUGHT and caught.value.usage.completion_tokens == 300
    # On "auto" the same answer cannot be told from a reply (the README says to set "tags" for such models).
    assert reply_from_completion(_completion({"content": THOUGHT}, "length", usage), ENDPOINT).text == THOUGHT
    complete = reply_from_completion(_completion({"content": f"{THOUGHT}\n</think>\n\n{REPLY}"}), endpoint)
    assert (complete.text, complete.reasoning, complete.reasoning_opened_in_prompt) == (REPLY, THOUGHT, True)


def test_a_tool_call_or_a_filtered_answer_is_permanent_an_empty_one_is_retried():
    tool = {
        "content": None,
        "tool_calls": [{"id": "1", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
    }
    with pytest.raises(PermanentError, match="tool call only"):
        reply_from_completion(_completion(tool, "tool_calls"), ENDPOINT)
    with pytest.raises(PermanentError, match="content filter"):
        reply_from_completion(_completion({"content": None}, "content_filter"), ENDPOINT)
    with pytest.raises(MalformedReply, match="empty content") as caught:
        reply_from_completion(_completion({"content": "  "}), ENDPOINT)
    assert caught.value.usage.completion_tokens == 5


def test_an_error_inside_a_200_keeps_its_code_message_and_provider():
    body = {"error": {"code": 502, "message": "Provider returned error", "metadata": {"provider_name": "Chutes"}}}
    with pytest.raises(Exception) as caught:
        reply_from_completion(body, ENDPOINT)
    text = str(caught.value)
    assert "HTTP 200" in text and "Provider returned error" in text and "502" in text and "Chutes" in text
    with pytest.raises(MalformedReply, match="no choices"):
        reply_from_completion({**_completion({"content": REPLY}), "choices": []}, ENDPOINT)


def test_content_parts_with_thinking_are_split():
    # Mistral's reasoning models: a list of parts, the thinking one holding parts of its own.
    parts = [{"type": "thinking", "thinking": [{"type": "text", "text": THOUGHT}]}, {"type": "text", "text": REPLY}]
    reply = reply_from_completion(_completion({"content": parts}), ENDPOINT)
    assert reply.text == REPLY and reply.reasoning == THOUGHT
    with pytest.raises(MalformedReply, match="content is a list"):
        reply_from_completion(_completion({"content": [{"type": "image_url", "image_url": {}}]}), ENDPOINT)
