"""The judge: rubric prompts for one tutor turn, strict parsing of the JSON scores, bounded re-asks.

Pure (no Django). The judge scores each tutor turn on the turn-level metrics its rubric version asks for
(docs/DOMAIN.md's five by default), with −1 meaning "not applicable". Output that is not a JSON object with
exactly the allowed values is rejected (the ledger marks that answer unparsable, so it is never served again)
and re-asked up to `max_reasks` times, then recorded as unparsable — never replaced by a default.
Conversation-level metrics are computed here too, deterministically from the transcript, so they do not depend
on the judge at all.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from edufair_web.rubric_metrics import NOT_APPLICABLE as NOT_APPLICABLE
from edufair_web.rubric_metrics import allowed_values

from .llm.json_reply import ReplyJSONError, reply_object
from .prompt_templates import DEFAULT_TEMPLATES, JUDGE_METRICS, JUDGE_RUBRIC, render_prompt


def default_template_text(kind: str) -> str:
    """The project's default text for a template kind (the first default of that kind)."""
    return next(template["text"] for template in DEFAULT_TEMPLATES if template["kind"] == kind)


METRICS: tuple[str, ...] = JUDGE_METRICS
# The default rubric's metrics with their scales plus −1 (from the metric registry). A rubric version asks for its
# own metrics: its callers pass `allowed_values(rubric.metrics)` as `allowed`.
DEFAULT_ALLOWED_VALUES: dict[str, frozenset[int]] = allowed_values(METRICS)

# The one default of the judge's re-asks (an unparsable reply asked again at most this many times), so of its
# attempts per tutor turn: the design preview, the launch form, the API, `run_audit` and the audit row all take it.
DEFAULT_MAX_REASKS = 2
DEFAULT_JUDGE_ATTEMPTS = 1 + DEFAULT_MAX_REASKS

PARSE_OK = "ok"
PARSE_UNPARSABLE = "unparsable"
PARSE_FAILED = "failed"  # the call itself failed (after the client's retries); no output to parse

# The rubric used when an audit names no judge_rubric template of its own (tests, notebooks).
DEFAULT_JUDGE_RUBRIC = default_template_text(JUDGE_RUBRIC)

REASK_TEMPLATE = (
    "Your previous reply could not be used: {problem}. Reply again with only one JSON object with the keys "
    "{keys}, each an integer from its scale or -1 when not applicable."
)


class JudgeOutputError(ValueError):
    """The judge's reply is not a valid score object; the message says exactly why."""


def transcript_text(turns: Sequence[tuple[str, str]]) -> str:
    """A dialogue as the judge reads it: one `Role: text` line block per turn."""
    return "\n".join(f"{'Tutor' if role == 'tutor' else 'Student'}: {text}" for role, text in turns)


def judge_messages(
    *,
    template: str,
    question: str,
    answer: str,
    context: Sequence[tuple[str, str]],
    turn_text: str,
    solution: str = "",
) -> list[dict]:
    """The first request for one tutor turn: the rubric (`string.Template` syntax, see
    `audits.prompt_templates`) with the dialogue before it."""
    prompt = render_prompt(
        template,
        question=question,
        answer=answer,
        solution=solution,
        history=transcript_text(context) or "(the dialogue starts with this turn)",
        tutor_turn=turn_text,
    )
    return [{"role": "user", "content": prompt}]


def parse_judge_output(text: str | None, allowed: dict[str, frozenset[int]] | None = None) -> dict[str, int]:
    """Return the scores of the rubric's metrics, or raise JudgeOutputError naming the first problem.

    `allowed` is the rubric version's metrics with their values (`PromptTemplate.judge_allowed_values`; the
    default rubric's when not given): a reply must answer those, and only those are required. Accepted: one JSON
    object (optionally inside a ```json fence) whose rubric keys each hold an integer from that metric's allowed
    values. Extra keys (a rationale, say) are ignored. Not accepted:
    prose, truncated JSON, missing metrics, strings, floats, booleans, values off the scale.
    """
    allowed = allowed or DEFAULT_ALLOWED_VALUES
    try:
        data = reply_object(text)
    except ReplyJSONError as exc:
        raise JudgeOutputError(str(exc)) from None
    scores: dict[str, int] = {}
    for metric, values in allowed.items():
        if metric not in data:
            raise JudgeOutputError(f"the key {metric!r} is missing")
        value = data[metric]
        # bool is a subclass of int in Python; true/false are not scores.
        if isinstance(value, bool) or not isinstance(value, int):
            raise JudgeOutputError(f"{metric} must be an integer, got {json.dumps(value)}")
        if value not in values:
            raise JudgeOutputError(f"{metric}={value} is not one of {sorted(values)}")
        scores[metric] = value
    return scores


def reask_messages(previous: list[dict], bad_reply: str, problem: str, metrics: Sequence[str]) -> list[dict]:
    """The conversation for a re-ask: the earlier request, the bad reply, and what was wrong with it."""
    return [
        *previous,
        {"role": "assistant", "content": bad_reply or ""},
        {"role": "user", "content": REASK_TEMPLATE.format(problem=problem, keys=", ".join(metrics))},
    ]


@dataclass
class JudgeCallOutcome:
    """What a judge caller returns: the text (None when the call failed) and the ledger id; `reject`,
    when given, tells the ledger the text could not be used (so it is never served as an answer)."""

    text: str | None
    call_id: int | None = None
    error: str = ""
    reject: Callable[[str], Awaitable[None]] | None = None


@dataclass
class TurnJudgement:
    """The judge's verdict for one tutor turn: scores, or the reason there are none."""

    turn_index: int
    status: str  # PARSE_OK | PARSE_UNPARSABLE | PARSE_FAILED
    scores: dict[str, int] = field(default_factory=dict)
    raw: str = ""  # the last reply as received (kept for unparsable ones, so a human can see it)
    problem: str = ""
    asks: int = 0
    call_ids: list[int] = field(default_factory=list)
    metrics: tuple[str, ...] = ()  # the metrics the rubric asked for (the rows a turn without scores gets)


JudgeCaller = Callable[[list[dict], int], Awaitable[JudgeCallOutcome]]


async def judge_turn(
    *,
    turn_index: int,
    messages: list[dict],
    call: JudgeCaller,
    max_reasks: int = DEFAULT_MAX_REASKS,
    allowed: dict[str, frozenset[int]] | None = None,
) -> TurnJudgement:
    """Ask the judge about one turn; re-ask on invalid output up to `max_reasks` times.

    `call(messages, ask_number)` sends one request (through the ledger) and returns its text.
    """
    allowed = allowed or DEFAULT_ALLOWED_VALUES
    call_ids: list[int] = []
    current = messages
    problem = ""
    reply: str | None = None
    for ask in range(max_reasks + 1):
        outcome = await call(current, ask)
        if outcome.call_id is not None:
            call_ids.append(outcome.call_id)
        if outcome.text is None:
            return TurnJudgement(
                turn_index,
                PARSE_FAILED,
                raw="",
                problem=outcome.error or "call failed",
                asks=ask + 1,
                call_ids=call_ids,
                metrics=tuple(allowed),
            )
        reply = outcome.text
        try:
            scores = parse_judge_output(reply, allowed)
        except JudgeOutputError as exc:
            problem = str(exc)
            if outcome.reject is not None:
                await outcome.reject(problem)
            current = reask_messages(current, reply, problem, list(allowed))
            continue
        return TurnJudgement(
            turn_index, PARSE_OK, scores=scores, raw=reply, asks=ask + 1, call_ids=call_ids, metrics=tuple(allowed)
        )
    return TurnJudgement(
        turn_index,
        PARSE_UNPARSABLE,
        raw=reply or "",
        problem=problem,
        asks=max_reasks + 1,
        call_ids=call_ids,
        metrics=tuple(allowed),
    )


# --- Conversation-level metrics (EduFair-Bench's four; deterministic, judge-free) ---------------------

CONVERSATION_METRICS: tuple[str, ...] = (
    "tutor_turns",
    "tutor_avg_word",
    "tutor_question_rate",
    "tutor_student_word_ratio",
)
# The simulated student's own side of the transcript, for the analysis's simulator check.
STUDENT_METRICS: tuple[str, ...] = ("student_turns", "student_avg_word")
_WORD = re.compile(r"\d+(?:[.,]\d+)*|[\w'’-]+", re.UNICODE)


def word_count(text: str) -> int:
    return len(_WORD.findall(text or ""))


def asks_question(text: str) -> bool:
    """A tutor turn asks a question when any of its sentences ends with a question mark."""
    return "?" in (text or "")


def conversation_metrics(turns: Sequence[tuple[str, str]]) -> dict[str, float | None]:
    """tutor_turns, mean words per tutor turn, share of tutor turns asking a question, tutor/student words,
    and the student's own turns and mean words per turn (STUDENT_METRICS, for the simulator check).

    A ratio whose denominator is zero is None (undefined), not 0.
    """
    tutor = [text for role, text in turns if role == "tutor"]
    student = [text for role, text in turns if role == "student"]
    tutor_words = sum(word_count(t) for t in tutor)
    student_words = sum(word_count(t) for t in student)
    return {
        "tutor_turns": float(len(tutor)),
        "tutor_avg_word": tutor_words / len(tutor) if tutor else None,
        "tutor_question_rate": sum(asks_question(t) for t in tutor) / len(tutor) if tutor else None,
        "tutor_student_word_ratio": tutor_words / student_words if student_words else None,
        "student_turns": float(len(student)),
        "student_avg_word": student_words / len(student) if student else None,
    }
