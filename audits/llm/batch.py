"""The OpenAI Batch API's side of judging, without Django: JSONL input, output read back, and judging rounds.

The JSONL input file has one line per ledger request (`custom_id` = the request hash); the output and error files are
read back into one outcome per request hash; judging rounds take their answers from what the ledger already holds.

A batch answers only the requests it was given; a judge reply that does not parse needs a re-ask, which
is a new request. `judgements_from_answers` therefore runs the engine's one judge call
(`audits.llm.dialogue.turn_judge`) for every turn against the answers known so far and returns, besides
the turns it could conclude, the requests still missing: the next round's batch lines. The requests and
their attempt keys are the online path's own, so a turn judged by batch and a turn judged online hit the
same ledger rows.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from ..judge import DEFAULT_MAX_REASKS, TurnJudgement
from . import request_body
from .calls import (
    MAX_ATTEMPT_ROUNDS,
    CallRequest,
    CallResult,
    EndpointConfig,
    PermanentError,
    RetryableError,
    attempt_key,
)
from .completion_reply import reply_from_completion
from .dialogue import TurnToJudge, turn_judge
from .server_errors import server_message

BATCH_URL = "/v1/chat/completions"
COMPLETION_WINDOW = "24h"
# OpenAI's limits on one batch input file: 50,000 requests and 200 MB; a round with more is split.
MAX_LINES = 50_000
MAX_FILE_BYTES = 190_000_000

# A batch's states, as the provider names them; the last four are final.
OPEN_STATES = ("validating", "in_progress", "finalizing", "cancelling")
FINAL_STATES = ("completed", "failed", "expired", "cancelled")
# Lines a batch never ran because it expired go again in a new batch of the same run, at most this many times.
MAX_EXPIRY_RESUBMISSIONS = 3
# The error codes OpenAI gives a line the batch never ran (in the error file, `response` null).
UNRUN_CODES = ("batch_expired", "batch_cancelled")


def chat_body(request: CallRequest) -> dict:
    """The chat-completions body of a request, as `OpenAICompatProvider.send` posts it online."""
    return request_body.chat_body(request.endpoint, request.messages, request.response_format)


def batch_lines(requests: Iterable[CallRequest]) -> list[dict]:
    """One input line per distinct request hash (a request asked twice is one ledger row, one line)."""
    lines: dict[str, dict] = {}
    for request in requests:
        request_hash = request.request_hash()
        if request_hash not in lines:
            lines[request_hash] = {
                "custom_id": request_hash,
                "method": "POST",
                "url": BATCH_URL,
                "body": chat_body(request),
            }
    return list(lines.values())


def request_chunks(
    requests: Mapping[str, CallRequest], *, max_lines: int | None = None, max_bytes: int | None = None
) -> list[dict[str, CallRequest]]:
    """The requests of one round split into batch files within the provider's limits (MAX_LINES,
    MAX_FILE_BYTES unless given), in key order, so a resumed run cuts the same chunks and finds its saved
    batches by their content."""
    max_lines = MAX_LINES if max_lines is None else max_lines
    max_bytes = MAX_FILE_BYTES if max_bytes is None else max_bytes
    chunks: list[dict[str, CallRequest]] = [{}]
    size = 0
    for key in sorted(requests):
        request = requests[key]
        line_bytes = len(jsonl_encode(batch_lines([request])))
        if chunks[-1] and (len(chunks[-1]) >= max_lines or size + line_bytes > max_bytes):
            chunks.append({})
            size = 0
        chunks[-1][key] = request
        size += line_bytes
    return [chunk for chunk in chunks if chunk]


def jsonl_encode(lines: Sequence[dict]) -> bytes:
    return "".join(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n" for line in lines).encode()


@dataclass(frozen=True)
class LineOutcome:
    """One request's result in a batch: its answer, or why there is none."""

    custom_id: str
    ok: bool
    text: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    reported_model: str = ""
    error: str = ""
    code: str = ""  # the provider's error code for the line, when it gave one (e.g. batch_expired)
    reasoning: str = ""
    reasoning_tokens: int = 0
    finish_reason: str = ""

    @property
    def unrun(self) -> bool:
        """The provider never ran this line (the batch expired or was cancelled first)."""
        return not self.ok and self.code in UNRUN_CODES


class UnreadableLine(ValueError):
    """A line of an output or error file that names no request (so no ledger row can take it)."""


def _chat_answer(custom_id: str, body) -> LineOutcome:
    """A 200 line's body read as an online answer is (audits.llm.completion_reply): the visible reply with its
    reasoning apart, else a failed outcome saying why, with the tokens the line was billed."""
    try:
        reply = reply_from_completion(body)
    except (RetryableError, PermanentError) as exc:
        return LineOutcome(
            custom_id,
            False,
            error=f"batch line: {exc}",
            prompt_tokens=exc.usage.prompt_tokens,
            completion_tokens=exc.usage.completion_tokens,
            reasoning_tokens=exc.usage.reasoning_tokens,
        )
    return LineOutcome(
        custom_id,
        True,
        text=reply.text,
        prompt_tokens=reply.prompt_tokens,
        completion_tokens=reply.completion_tokens,
        reported_model=reply.model,
        reasoning=reply.reasoning,
        reasoning_tokens=reply.reasoning_tokens,
        finish_reason=reply.finish_reason,
    )


def _line_error(custom_id: str, response, error) -> LineOutcome:
    """A line that carries no answer, in the provider's words: OpenAI's `{"error": {"message", "type", "code"}}`
    in `response.body`, vLLM's and SGLang's `{"object": "error", "message": ...}`, a plain string, or a
    line-level `error` object or string (read by `audits.llm.server_errors.server_message`)."""
    status = response.get("status_code") if isinstance(response, dict) else None
    body = response.get("body") if isinstance(response, dict) else None
    code = ""
    if isinstance(error, dict) and isinstance(error.get("code"), str):
        code = error["code"]
    parts = []
    if status is not None:
        parts.append(f"HTTP {status}")
    for value in (body, error):
        message = server_message(value) if value not in (None, "", {}, []) else ""
        if message and message not in parts:
            parts.append(message)
    if code and not any(code in part for part in parts):
        parts.insert(1 if status is not None else 0, code)
    if not parts:
        parts.append("neither a response nor an error")
    return LineOutcome(custom_id, False, error="batch line: " + ": ".join(parts), code=code)


def output_line_parse(raw: str) -> LineOutcome:
    """One line of a batch's output or error file. Raises UnreadableLine when it names no request."""
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise UnreadableLine(f"not JSON ({exc.msg})") from None
    if not isinstance(data, dict) or not isinstance(data.get("custom_id"), str) or not data["custom_id"]:
        raise UnreadableLine("the line has no custom_id")
    custom_id = data["custom_id"]
    error = data.get("error")
    response = data.get("response")
    if isinstance(response, dict) and response.get("status_code") == 200 and not error:
        body = response.get("body")
        if isinstance(body, dict) and body.get("object") == "error":
            return _line_error(custom_id, {"status_code": body.get("code") or 200, "body": body}, None)
        return _chat_answer(custom_id, body)
    return _line_error(custom_id, response, error)


def validation_errors(errors) -> list[dict]:
    """A batch's `errors.data` (the reasons a provider rejected the whole batch at validation) as plain
    dicts {code, message, param, line}, in the provider's words; [] when it gave none."""
    data = errors.get("data") if isinstance(errors, dict) else getattr(errors, "data", None)
    found = []
    for item in data or []:
        values = item if isinstance(item, dict) else item.model_dump() if hasattr(item, "model_dump") else {}
        found.append(
            {
                "code": str(values.get("code") or ""),
                "message": server_message(values.get("message") or ""),
                "param": str(values.get("param") or ""),
                "line": values.get("line") if isinstance(values.get("line"), int) else None,
            }
        )
    return found


def validation_error_text(error: dict) -> str:
    """One validation error as a line: "code: message (line 3, param body.model)"."""
    where = ", ".join(
        part
        for part in (
            f"line {error['line']}" if error.get("line") else "",
            f"param {error['param']}" if error.get("param") else "",
        )
        if part
    )
    text = ": ".join(part for part in (error.get("code"), error.get("message")) if part) or "no reason given"
    return f"{text} ({where})" if where else text


@dataclass
class BatchResults:
    outcomes: dict[str, LineOutcome] = field(default_factory=dict)
    unreadable: int = 0

    @property
    def answered(self) -> int:
        return sum(1 for o in self.outcomes.values() if o.ok)

    @property
    def failed(self) -> int:
        return sum(1 for o in self.outcomes.values() if not o.ok)


MISSING = "batch line: missing from the output"


def batch_results(
    output_text: str,
    error_text: str,
    expected: Iterable[str],
    *,
    missing: str = "",
    by_line: Mapping[str, str] | None = None,
) -> BatchResults:
    """Every expected request hash mapped to its outcome. A line for a request not in the batch is
    ignored; an answer beats an error for the same id. An expected request on no line failed: with its own
    reason when the batch gave one (`by_line`: a validation error naming its input line), else with the
    batch's reason (`missing`: why the batch ran no line, e.g. rejected at validation, expired, never
    uploaded), else "missing from the output"."""
    expected = set(expected)
    results = BatchResults()
    for text in (output_text or "", error_text or ""):
        for raw in text.splitlines():
            if not raw.strip():
                continue
            try:
                outcome = output_line_parse(raw)
            except UnreadableLine:
                results.unreadable += 1
                continue
            if outcome.custom_id not in expected:
                continue
            known = results.outcomes.get(outcome.custom_id)
            if known is None or (outcome.ok and not known.ok):
                results.outcomes[outcome.custom_id] = outcome
    by_line = by_line or {}
    for custom_id in expected - set(results.outcomes):
        reason = by_line.get(custom_id) or missing
        results.outcomes[custom_id] = LineOutcome(
            custom_id, False, error=f"batch line: {reason}" if reason else MISSING, code="missing"
        )
    return results


# --- judging rounds ------------------------------------------------------------------------------


STATUS_OK = "ok"
STATUS_UNPARSABLE = "unparsable"
STATUS_FAILED = "failed"


@dataclass(frozen=True)
class KnownAnswer:
    """What the ledger holds under one attempt key: an answer (ok), an answer nobody could use
    (unparsable: the next round's key is asked instead), or a failure recorded in this run."""

    status: str
    text: str | None = None
    call_id: int | None = None
    error: str = ""


@dataclass
class RoundResult:
    judgements: list[TurnJudgement | None] = field(default_factory=list)  # per turn; None: not concluded
    # (attempt key, request) for every unfinished turn: the next request the ledger does not hold yet.
    missing: dict[str, CallRequest] = field(default_factory=dict)
    # Ledger rows whose answer the judge could not parse, with the problem: to be marked unparsable.
    rejected: list[tuple[int, str]] = field(default_factory=list)

    @property
    def concluded(self) -> int:
        return sum(1 for j in self.judgements if j is not None)


class _Pending(Exception):
    def __init__(self, key: str, request: CallRequest) -> None:
        self.key = key
        self.request = request


def _drive(coroutine):
    """Run a coroutine that never waits on anything (its client answers at once) to its result."""
    try:
        coroutine.send(None)
    except StopIteration as stop:
        return stop.value
    coroutine.close()
    raise RuntimeError("a judging round waited on something; its client must answer at once")


def answer_lookup(request: CallRequest, answers: dict[str, KnownAnswer]) -> tuple[str, KnownAnswer | None]:
    """The attempt key the online client would use for this request, and what is known under it: the
    first key whose row is not unparsable (`audits.llm.calls.attempt_key`)."""
    request_hash = request.request_hash()
    key = request_hash
    for round_number in range(MAX_ATTEMPT_ROUNDS):
        key = attempt_key(request_hash, round_number)
        known = answers.get(key)
        if known is None or known.status != STATUS_UNPARSABLE:
            return key, known
    return key, KnownAnswer(STATUS_FAILED, error=f"the answers of {MAX_ATTEMPT_ROUNDS} rounds could not be used")


class RoundClient:
    """Stands in for `LLMClient` in `turn_judge`: answers from the known answers, and stops a turn at
    the first request it has no answer for. Rejections are collected, not applied, so every round of a
    run (and a successor's rounds after a crash) walks the same path to the same requests."""

    def __init__(self, answers: dict[str, KnownAnswer]) -> None:
        self.answers = answers
        self.rejected: list[tuple[int, str]] = []

    async def complete(self, request: CallRequest) -> CallResult:
        key, known = answer_lookup(request, self.answers)
        if known is None:
            raise _Pending(key, request)
        return CallResult(
            ok=known.status == STATUS_OK,
            text=known.text if known.status == STATUS_OK else None,
            call_id=known.call_id,
            cached=True,
            error=known.error,
            status=known.status,
        )

    async def reject(self, result: CallResult, problem: str) -> None:
        if result.ok and result.call_id is not None:
            self.rejected.append((result.call_id, problem))


def judgements_from_answers(
    turns: Sequence[TurnToJudge],
    endpoint: EndpointConfig,
    answers: dict[str, KnownAnswer],
    *,
    template: str,
    max_reasks: int = DEFAULT_MAX_REASKS,
    allowed: dict | None = None,
) -> RoundResult:
    """Judge each turn (`audits.llm.dialogue.turn_judge`, the engine's one judge call) as far as the known
    answers go. A turn whose next request has no known answer is left for a later round; a failure known
    for a request concludes the turn as failed, as an online call that failed after its retries does."""
    result = RoundResult()
    for turn in turns:
        client = RoundClient(answers)
        try:
            judgement = _drive(
                turn_judge(turn, client, endpoint, template=template, max_reasks=max_reasks, allowed=allowed)
            )
        except _Pending as pending:
            result.judgements.append(None)
            result.missing.setdefault(pending.key, pending.request)
            continue
        result.judgements.append(judgement)
        result.rejected.extend(client.rejected)
    return result
