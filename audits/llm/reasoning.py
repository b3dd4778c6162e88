"""A model reply split into what the reader sees and the model's reasoning: fields, `<think>` blocks, the tag-less form.

Pure (no Django). Reasoning models send their chain of thought in one of several ways (docs/DOMAIN.md,
"Real model servers"): a `reasoning_content` or `reasoning` field beside `content` (vLLM with a reasoning
parser, SGLang, llama.cpp, Ollama ≥ 0.9, OpenRouter); `<think>…</think>` inside `content` (vLLM without a
parser, Ollama < 0.9, LM Studio, Groq raw); DeepSeek-R1-Distill's tag-less form, whose chat template opens the
block in the prompt, so the output is reasoning, a lone `</think>`, then the reply; and reasoning cut off by the
token budget, with no closing tag at all. DeepSeek-R1-Distill cut off before its `</think>` holds no tag at all, so
nothing in the text tells it from a reply: an endpoint set to "tags" says the block may be opened by the chat
template, and there a reply the budget cut off with no closing tag is all reasoning. Only the visible text is a
tutor's turn, the text a judge scores and what a JSON reader parses; the reasoning is kept beside it in the ledger.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# How an endpoint's reasoning arrives (ModelEndpoint.reasoning_format).
REASONING_AUTO = "auto"  # a reasoning field when there is one, and reasoning blocks removed from the reply
REASONING_FIELD = "field"  # only a separate field: the reply is taken as it comes
REASONING_TAGS = (
    "tags"  # only inside the reply: blocks removed, a field ignored; cut off before </think>: all reasoning
)
REASONING_NONE = "none"  # the reply as it comes, no field read
REASONING_FORMATS = (REASONING_AUTO, REASONING_FIELD, REASONING_TAGS, REASONING_NONE)

# The reasoning fields of the servers that send one, in the order they are read.
REASONING_FIELDS = ("reasoning_content", "reasoning")

SOURCE_FIELD = "field"
SOURCE_TAGS = "tags"

_OPEN = re.compile(r"<(think|thinking)>", re.IGNORECASE)
_BLOCK = re.compile(r"<(think|thinking)>(.*?)</\1>", re.IGNORECASE | re.DOTALL)
_CLOSE = re.compile(r"</(think|thinking)>", re.IGNORECASE)


@dataclass(frozen=True)
class ReasoningSplit:
    visible: str  # the reply a reader sees (stripped); empty when the model said nothing else
    reasoning: str = ""  # every piece of reasoning, in order, blank lines between pieces
    source: str = ""  # SOURCE_FIELD, SOURCE_TAGS, both joined by "+", or "" when there was none
    unclosed: bool = False  # a reasoning block the budget cut off before its closing tag
    opened_in_prompt: bool = False  # a lone closing tag: the chat template opened the block (DeepSeek-R1-Distill)


def _tagged(content: str) -> tuple[str, list[str], bool, bool]:
    """(visible text, reasoning pieces, unclosed, opened in the prompt) of a reply that may carry reasoning
    inside it."""
    pieces: list[str] = []

    def take(match: re.Match) -> str:
        pieces.append(match.group(2).strip())
        return ""

    rest = _BLOCK.sub(take, content)
    # DeepSeek-R1-Distill: the opening tag was in the prompt, so everything up to a lone closing tag is reasoning.
    closes = list(_CLOSE.finditer(rest))
    opened_in_prompt = bool(closes)
    if closes:
        last = closes[-1]
        pieces.insert(0, _CLOSE.sub("", rest[: last.start()]).strip())
        rest = rest[last.end() :]
    unclosed = False
    opened = _OPEN.search(rest)
    if opened:  # a block the token budget cut off: no closing tag, the rest of the reply is reasoning
        pieces.append(rest[opened.end() :].strip())
        rest = rest[: opened.start()]
        unclosed = True
    return rest.strip(), [piece for piece in pieces if piece], unclosed, opened_in_prompt


def split_reasoning(
    content: str | None, field_reasoning: str | None, mode: str = REASONING_AUTO, *, cut_off: bool = False
) -> ReasoningSplit:
    """The visible reply and the reasoning of one answer, read as `mode` says (REASONING_FORMATS); `cut_off`
    when the token budget ended it (finish_reason "length")."""
    content = content or ""
    field = (field_reasoning or "").strip() if mode in (REASONING_AUTO, REASONING_FIELD) else ""
    pieces, sources, unclosed, opened_in_prompt = [], [], False, False
    if field:
        pieces.append(field)
        sources.append(SOURCE_FIELD)
    visible, tagged = content.strip(), []
    if mode in (REASONING_AUTO, REASONING_TAGS) and ("<" in content):
        visible, tagged, unclosed, opened_in_prompt = _tagged(content)
    if mode == REASONING_TAGS and cut_off and visible and not _CLOSE.search(content):
        # The template opened the block in the prompt and the budget ended it before `</think>`: no reply yet.
        tagged, visible, unclosed = [visible, *tagged], "", True
    if tagged or unclosed:
        pieces.extend(tagged)
        sources.append(SOURCE_TAGS)
    return ReasoningSplit(
        visible=visible,
        reasoning="\n\n".join(pieces),
        source="+".join(sources),
        unclosed=unclosed,
        opened_in_prompt=opened_in_prompt,
    )
