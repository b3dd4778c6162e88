"""The tutoring dialogue loop, pure: the student states the problem, then tutor and student alternate until it ends.

It ends when the tutor reveals the answer or confirms the student's correct answer, or after T_max tutor turns.

Pure (no Django): the loop takes rendered prompts and an async `call(purpose, messages, hints)` that
sends one model request (through the ledger, in production) and returns its text. Whether the tutor
revealed or confirmed is decided by a model check that answers JSON (docs/DOMAIN.md "Dialogue loop"); an
optional cheap answer-match pre-check skips that call when neither the tutor's turn nor the student's
last message mentions the reference answer, since then neither a reveal nor a confirmation can have
happened.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from .judge import default_template_text, transcript_text
from .llm.json_reply import EMPTY, INVALID, ReplyJSONError, reply_object
from .prompt_templates import REVEAL_CHECK, render_prompt

END_REVEALED = "revealed"
END_CONFIRMED = "confirmed"
END_T_MAX = "t_max"
END_ERROR = "error"
END_REASONS = (END_REVEALED, END_CONFIRMED, END_T_MAX, END_ERROR)

PURPOSE_TUTOR = "tutor"
PURPOSE_STUDENT = "student"
PURPOSE_CHECK = "check"
PURPOSE_JUDGE = "judge"
PURPOSES = (PURPOSE_TUTOR, PURPOSE_STUDENT, PURPOSE_CHECK, PURPOSE_JUDGE)

DEFAULT_T_MAX = 10

# The student's first request: the persona (system prompt) carries the cue; this asks it to begin.
STUDENT_KICKOFF = (
    "The tutoring session starts now. Introduce yourself as your persona would, state the problem in your own "
    "words, and give your first attempt at an answer."
)

DEFAULT_REVEAL_CHECK = default_template_text(REVEAL_CHECK)


@dataclass
class CallOutcome:
    """One model call as the loop sees it: the text, or None and an error when the call failed;
    `reject`, when given, tells the ledger the text could not be used (never to be served again)."""

    text: str | None
    call_id: int | None = None
    error: str = ""
    reject: Callable[[str], Awaitable[None]] | None = None


# call(purpose, messages, hints) -> CallOutcome. `hints` are facts the loop knows about this request
# (turn number, the turn being checked); a simulated model reads them, a real model never sees them.
Caller = Callable[[str, list[dict], dict], Awaitable[CallOutcome]]


@dataclass
class DialogueSpec:
    question: str
    answer: str
    tutor_system: str
    student_system: str
    check_template: str = DEFAULT_REVEAL_CHECK
    t_max: int = DEFAULT_T_MAX
    answer_precheck: bool = False
    max_check_reasks: int = 2
    student_kickoff: str = STUDENT_KICKOFF


@dataclass
class DialogueTurn:
    role: str  # "tutor" | "student"
    text: str
    call_id: int | None = None


@dataclass
class DialogueResult:
    turns: list[DialogueTurn]
    end_reason: str
    error: str = ""
    # Every ledger row this dialogue used, including reveal checks and their re-asks.
    call_ids: list[int] = field(default_factory=list)

    @property
    def pairs(self) -> list[tuple[str, str]]:
        return [(t.role, t.text) for t in self.turns]


class DialogueError(RuntimeError):
    """A model call the dialogue cannot do without failed; the dialogue ends with END_ERROR."""


# --- the cheap pre-check ---------------------------------------------------------------------------

_NUMBER = re.compile(r"[-+]?\d+(?:[.,]\d+)?(?:[eE][-+]?\d+)?")


def normalise_text(text: str) -> str:
    text = unicodedata.normalize("NFKC", text or "").lower()
    return re.sub(r"[^\w.%/-]+", " ", text).strip()


def _numbers(text: str) -> list[float]:
    found = []
    for token in _NUMBER.findall(text or ""):
        try:
            found.append(float(token.replace(",", ".")))
        except ValueError:  # pragma: no cover - the pattern only matches numbers
            continue
    return found


def answer_mentioned(text: str, answer: str) -> bool:
    """True when `text` contains the reference answer: its normalised string, or its number."""
    norm_answer = normalise_text(answer)
    if not norm_answer:
        return False
    # A number is not found inside a longer one, nor inside its negative ("-49" does not say 49).
    before = r"(?<![\w.])(?<!-)" if norm_answer[0].isdigit() else r"(?<![\w.])"
    if re.search(rf"{before}{re.escape(norm_answer)}(?![\w])", normalise_text(text)):
        return True
    answer_numbers = _numbers(answer)
    if len(answer_numbers) == 1:
        target = answer_numbers[0]
        return any(abs(n - target) <= 1e-9 * max(1.0, abs(target)) for n in _numbers(text))
    return False


# --- the model check ---------------------------------------------------------------------------------


def _check_problem(error: ReplyJSONError) -> str:
    """The check's own wording of an unreadable reply (shorter than the judge's), as its re-ask has always said it."""
    if error.kind == EMPTY:
        return "the reply was empty"
    if error.kind == INVALID:
        return f"the reply is not valid JSON ({error.json_msg})"
    return "the reply is not a JSON object"


def parse_check_output(text: str | None) -> tuple[bool, bool]:
    """(revealed, confirmed) from the check's JSON; ValueError naming the problem otherwise."""
    try:
        data = reply_object(text)
    except ReplyJSONError as exc:
        raise ValueError(_check_problem(exc)) from None
    values = []
    for key in ("revealed", "confirmed"):
        if not isinstance(data.get(key), bool):
            raise ValueError(f"{key!r} must be true or false")
        values.append(data[key])
    return values[0], values[1]


def _as_chat(turns: list[DialogueTurn], speaker: str) -> list[dict]:
    """The turns from `speaker`'s point of view: its own turns are `assistant`, the other's `user`."""
    return [{"role": "assistant" if t.role == speaker else "user", "content": t.text} for t in turns]


async def _reveal_check(
    spec: DialogueSpec, call: Caller, turns: list[DialogueTurn], turn_number: int, call_ids: list[int]
) -> tuple[bool, bool]:
    tutor_text = turns[-1].text
    student_last = next((t.text for t in reversed(turns) if t.role == "student"), "")
    prompt = render_prompt(
        spec.check_template,
        question=spec.question,
        answer=spec.answer,
        student_turn=student_last,
        tutor_turn=tutor_text,
    )
    messages = [{"role": "user", "content": prompt}]
    hints = {"turn": turn_number, "turn_text": tutor_text, "student_last": student_last}
    problem = ""
    for ask in range(spec.max_check_reasks + 1):
        outcome = await call(PURPOSE_CHECK, messages, {**hints, "ask": ask})
        if outcome.call_id is not None:
            call_ids.append(outcome.call_id)
        if outcome.text is None:
            raise DialogueError(f"reveal check failed: {outcome.error}")
        try:
            return parse_check_output(outcome.text)
        except ValueError as exc:
            problem = str(exc)
            if outcome.reject is not None:
                await outcome.reject(problem)
            messages = [
                *messages,
                {"role": "assistant", "content": outcome.text},
                {
                    "role": "user",
                    "content": f"Your reply could not be used: {problem}. Reply with only "
                    '{"revealed": true or false, "confirmed": true or false}.',
                },
            ]
    # Never assume "not revealed": a dialogue whose end cannot be decided is an error, shown as such.
    raise DialogueError(f"reveal check unparsable after {spec.max_check_reasks + 1} asks: {problem}")


async def run_dialogue(spec: DialogueSpec, call: Caller) -> DialogueResult:
    """Run the loop; never raises for model failures (they end the dialogue with END_ERROR)."""
    turns: list[DialogueTurn] = []
    call_ids: list[int] = []

    async def speak(role: str, messages: list[dict], hints: dict) -> None:
        outcome = await call(role, messages, hints)
        if outcome.call_id is not None:
            call_ids.append(outcome.call_id)
        if outcome.text is None or not outcome.text.strip():
            raise DialogueError(f"{role} call failed: {outcome.error or 'empty reply'}")
        turns.append(DialogueTurn(role, outcome.text.strip(), outcome.call_id))

    tutor_system = {"role": "system", "content": spec.tutor_system}
    student_system = {"role": "system", "content": spec.student_system}
    try:
        await speak(PURPOSE_STUDENT, [student_system, {"role": "user", "content": spec.student_kickoff}], {"turn": 0})
        for turn_number in range(1, spec.t_max + 1):
            student_last = turns[-1].text
            await speak(
                PURPOSE_TUTOR,
                [tutor_system, *_as_chat(turns, "tutor")],
                {"turn": turn_number, "student_last": student_last},
            )
            tutor_text = turns[-1].text
            needs_check = not spec.answer_precheck or (
                answer_mentioned(tutor_text, spec.answer) or answer_mentioned(student_last, spec.answer)
            )
            if needs_check:
                revealed, confirmed = await _reveal_check(spec, call, turns, turn_number, call_ids)
                if revealed:
                    return DialogueResult(turns, END_REVEALED, call_ids=call_ids)
                if confirmed:
                    return DialogueResult(turns, END_CONFIRMED, call_ids=call_ids)
            if turn_number == spec.t_max:
                break
            # The student sees the dialogue with its own turns as `assistant`; the kickoff stays first.
            await speak(
                PURPOSE_STUDENT,
                [student_system, {"role": "user", "content": spec.student_kickoff}, *_as_chat(turns, "student")],
                {"turn": turn_number, "tutor_last": tutor_text},
            )
    except DialogueError as exc:
        return DialogueResult(turns, END_ERROR, error=str(exc), call_ids=call_ids)
    return DialogueResult(turns, END_T_MAX, call_ids=call_ids)


def judge_contexts(turns: list[DialogueTurn]) -> list[tuple[int, list[tuple[str, str]], str]]:
    """For each tutor turn: (its index in the dialogue, the turns before it, its text)."""
    return [
        (index, [(t.role, t.text) for t in turns[:index]], turn.text)
        for index, turn in enumerate(turns)
        if turn.role == "tutor"
    ]


__all__ = [
    "CallOutcome",
    "DialogueResult",
    "DialogueSpec",
    "DialogueTurn",
    "answer_mentioned",
    "judge_contexts",
    "parse_check_output",
    "run_dialogue",
    "transcript_text",
]
