"""Judging through the OpenAI Batch API, in rounds that survive a killed worker.

It serves endpoints marked batch-capable: the turns of a judging run go to the provider as JSONL files of judge
requests, in rounds (first asks, then re-asks of replies that did not parse), and come back into the ledger at the batch
price.

Each round is a `JudgeBatch` row, found again by the content hash of its request keys. Every step at the
provider (file uploaded, batch created, polled, output collected) is saved before the next, so a worker
killed at any point leaves a successor that rebuilds the same round, finds the same row and polls the
batch already paid for; a batch created by a worker killed before it could save the id is adopted by its
metadata. Output lines are mapped back to their ledger rows by `custom_id` (the attempt key); failed lines
become failed calls, which a later batch or an online run asks again, in the provider's words; a batch the
provider rejected at validation keeps its reasons (`errors.data`) and gives them to every line it held.

Before a run uses an endpoint's Batch API it checks that the endpoint has one (`batch_api_missing`: a
cheap list of files); lines a batch never ran because it expired are sent again in a new batch within the
run, at most `MAX_EXPIRY_RESUBMISSIONS` times; a run's open batches can be cancelled at the provider
(`run_batches_cancel`), and the lines they never ran fail saying so. The pure part is `audits.llm.batch`.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable, Sequence

import openai
from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from audits.judge import DEFAULT_MAX_REASKS, TurnJudgement
from audits.llm import batch as batchlib
from audits.llm.dialogue import TurnToJudge
from audits.llm.openai_compat import NO_KEY_PLACEHOLDER, address_headers, api_key_for
from audits.llm.outbound_policy import OutboundRefused, current_policy
from audits.llm.outbound_transport import checked_sync_http_client
from audits.llm.server_errors import status_error_text
from audits.models import JudgeBatch, JudgeRun, LLMCall, ModelEndpoint
from audits.services.progress_tally import count_new_calls, counted_call_change

logger = logging.getLogger(__name__)

METADATA_KEY = "edufair_batch"
# The answers that mean "this server has no such API" (not found, method not allowed, not implemented).
NO_API_STATUSES = (404, 405, 501)


class BatchNotPossible(ValueError):
    """The endpoint cannot judge by batch (not marked batch-capable, or a simulation)."""


class BatchApiError(RuntimeError):
    """The provider refused a step of the Batch API (a 4xx other than 429), in its own words."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


# A ledger row's billed token counts: a failed row answered later keeps what its earlier attempts cost.
BILLED_FIELDS = ("prompt_tokens", "completion_tokens", "reasoning_tokens")


def poll_seconds() -> float:
    return float(settings.JUDGE_BATCH_POLL_SECONDS)


def batch_client(endpoint: ModelEndpoint) -> openai.OpenAI:
    """The SDK's client for the files and batches endpoints; no retries of its own (`_api` retries). Its
    key variable and every address it connects to are checked as the online client's are."""
    config = endpoint.to_config()
    key = api_key_for(config)
    return openai.OpenAI(
        # Where the key goes in a header of its own (Azure's api-key), the bearer token carries no key.
        api_key=NO_KEY_PLACEHOLDER if config.api_key_header else key,
        base_url=config.base_url or None,
        max_retries=0,
        timeout=config.timeout,
        http_client=checked_sync_http_client(policy=current_policy(), timeout=config.timeout),
        default_headers=address_headers(config, key),
        default_query=dict(config.query_params) or None,
    )


def _api(call: Callable, what: str, attempts: int = 5):
    """One Batch API call; connection errors, timeouts, 429 and 5xx are tried again, others raise."""
    for attempt in range(1, attempts + 1):
        try:
            return call()
        except OutboundRefused as exc:
            raise BatchApiError(f"{what}: refused: {exc}") from None
        except (openai.APIConnectionError, openai.APITimeoutError) as exc:
            problem = f"{what}: {type(exc).__name__}"
        except openai.APIStatusError as exc:
            status = exc.status_code
            body = exc.body if exc.body is not None else exc.response.text
            if status != 429 and status < 500:
                raise BatchApiError(f"{what}: {status_error_text(status, body)}", status) from None
            problem = f"{what}: {status_error_text(status, body)}"
        logger.info("batch API retry %d: %s", attempt, problem)
        time.sleep(min(30.0, poll_seconds() * attempt))
    raise BatchApiError(f"{problem} (gave up after {attempts} attempts)")


def batch_api_missing(endpoint: ModelEndpoint) -> str:
    """Why the endpoint cannot take batches ("" when it can): a cheap list of its files (GET /v1/files) answered
    404, 405 or 501 — a server that speaks chat completions but not the Files and Batch APIs. Any other
    refusal raises BatchApiError (a wrong key is not a missing API)."""
    client = batch_client(endpoint)
    try:
        _api(lambda: client.files.list(limit=1), "list the files (GET /v1/files)")
        _api(lambda: client.batches.list(limit=1), "list the batches (GET /v1/batches)")
    except BatchApiError as exc:
        if exc.status in NO_API_STATUSES:
            return f"{endpoint} has no Files and Batch API: {exc}"
        raise
    finally:
        client.close()
    return ""


# --- the ledger's side ---------------------------------------------------------------------------


def _known_answers(keys: Sequence[str], run: JudgeRun) -> tuple[dict[str, batchlib.KnownAnswer], set[str]]:
    """What the ledger holds under these keys: answers (ok / unparsable), and failures recorded by this
    run's batches (they conclude their turn); keys failed earlier, or never asked, are to be sent."""
    known: dict[str, batchlib.KnownAnswer] = {}
    rows = LLMCall.objects.filter(request_hash__in=list(keys)).values(
        "pk", "request_hash", "status", "response_text", "error", "batch__run_id"
    )
    for row in rows:
        if row["status"] in (LLMCall.Status.OK, LLMCall.Status.UNPARSABLE):
            known[row["request_hash"]] = batchlib.KnownAnswer(row["status"], row["response_text"], row["pk"])
        elif row["batch__run_id"] == run.pk:
            known[row["request_hash"]] = batchlib.KnownAnswer(batchlib.STATUS_FAILED, None, row["pk"], row["error"])
    return known, set(keys) - set(known)


def _ledger_reject(rejected: list[tuple[int, str]]) -> None:
    """Mark the answers the judge could not parse unparsable (never served again; their text stays)."""
    for call_id, problem in rejected:
        with counted_call_change([call_id]):
            LLMCall.objects.filter(pk=call_id, status=LLMCall.Status.OK).update(
                status=LLMCall.Status.UNPARSABLE, error=problem[:2000]
            )


@transaction.atomic
def _collect(
    batch: JudgeBatch,
    results: batchlib.BatchResults,
    endpoint: ModelEndpoint,
    *,
    final_status: str = "",
    unrun: int = 0,
    resubmit: frozenset[str] = frozenset(),
) -> None:
    """Each line into its ledger row (found by custom_id): answers at the batch price, failures as failed
    calls; a row another worker answered meanwhile keeps its answer. Lines in `resubmit` (never run: the
    batch expired) are left out of the ledger, for the next batch of the run to ask. The batch becomes
    collected, with how it ended at the provider."""
    factor = float(endpoint.batch_price_factor) if endpoint else 1.0
    existing = {
        row.request_hash: row
        for row in LLMCall.objects.select_for_update().filter(request_hash__in=list(results.outcomes))
    }
    fresh = []
    for key, outcome in results.outcomes.items():
        if key in resubmit:
            continue
        stored = batch.requests.get(key, {})
        values = {
            "response_text": outcome.text,
            "status": LLMCall.Status.OK if outcome.ok else LLMCall.Status.FAILED,
            "error": outcome.error,
            "prompt_tokens": outcome.prompt_tokens,
            "completion_tokens": outcome.completion_tokens,
            "reported_model": outcome.reported_model,
            "reasoning": outcome.reasoning,
            "reasoning_tokens": outcome.reasoning_tokens,
            "finish_reason": outcome.finish_reason[:20],
            "batch": batch,
            "price_factor": factor,
        }
        row = existing.get(key)
        if row is None:
            fresh.append(
                LLMCall(
                    request_hash=key,
                    endpoint_id=batch.endpoint_id,
                    purpose=stored.get("purpose", "judge"),
                    model=stored.get("model", ""),
                    request=stored.get("request", {}),
                    attempts=1,
                    attempt_log=[] if outcome.ok else [{"attempt": 1, "error": outcome.error, "retry": False}],
                    first_audit_id=stored.get("audit_id"),
                    **values,
                )
            )
        elif row.status == LLMCall.Status.FAILED:
            log = [*row.attempt_log, *([] if outcome.ok else [{"attempt": row.attempts + 1, "error": outcome.error}])]
            # What the row's earlier attempts were billed stays counted.
            billed = {
                name: F(name) + values[name] for name in ("prompt_tokens", "completion_tokens", "reasoning_tokens")
            }
            with counted_call_change([row.pk]):
                LLMCall.objects.filter(pk=row.pk).update(
                    attempts=row.attempts + 1, attempt_log=log, **{**values, **billed}
                )
    LLMCall.objects.bulk_create(fresh, batch_size=500)
    count_new_calls(fresh)
    JudgeBatch.objects.filter(pk=batch.pk).update(
        status=JudgeBatch.Status.COLLECTED,
        answered=results.answered,
        failed=results.failed - unrun,
        unreadable=results.unreadable,
        unrun=unrun,
        final_status=final_status,
        collected_at=timezone.now(),
    )


# --- one batch at the provider ---------------------------------------------------------------------


def _content_hash(keys, sending: int = 0) -> str:
    """The hash a batch of these keys is found by; `sending` > 0 for the same keys sent again (the lines of
    an expired batch that ran none of them)."""
    text = "\n".join(sorted(keys)) + (f"\n#sending {sending}" if sending else "")
    return hashlib.sha256(text.encode()).hexdigest()


def _batch_for_round(run: JudgeRun, endpoint: ModelEndpoint, missing: dict) -> JudgeBatch:
    """The run's batch for exactly these requests: the one saved before and not yet collected (a resumed
    run), or a new row (the same requests again after a batch that expired before running any of them)."""
    for sending in range(batchlib.MAX_EXPIRY_RESUBMISSIONS + 2):
        content = _content_hash(missing, sending)
        found = JudgeBatch.objects.filter(run=run, content_hash=content).first()
        if found is None:
            break
        if found.status != JudgeBatch.Status.COLLECTED:
            return found
    else:
        raise RuntimeError(f"run {run.pk}: its batches were collected but their requests are not in the ledger")
    requests = {
        key: {
            "purpose": request.purpose,
            "model": request.endpoint.model,
            "request": request.stored_request(),
            "audit_id": request.origin.get("audit_id"),
            "line": batchlib.batch_lines([request])[0]["body"],
        }
        for key, request in missing.items()
    }
    batch, _ = JudgeBatch.objects.get_or_create(
        run=run,
        content_hash=content,
        defaults={
            "endpoint": endpoint,
            "round": run.batches.count(),
            "requests": requests,
            "lines": len(requests),
        },
    )
    return batch


def _save(batch: JudgeBatch, **values) -> None:
    for name, value in values.items():
        setattr(batch, name, value)
    JudgeBatch.objects.filter(pk=batch.pk).update(**values)


def _remote_state(batch: JudgeBatch, remote) -> None:
    counts = getattr(remote, "request_counts", None)
    values = {
        "status": remote.status,
        "output_file_id": remote.output_file_id or "",
        "error_file_id": remote.error_file_id or "",
        "request_counts": counts.model_dump() if counts is not None else {},
        "polled_at": timezone.now(),
    }
    rejected = batchlib.validation_errors(getattr(remote, "errors", None))
    if rejected:
        values["validation_errors"] = rejected
        values["error"] = "the provider rejected the batch: " + "; ".join(
            batchlib.validation_error_text(e) for e in rejected[:5]
        )
    _save(batch, **values)


def _submit(batch: JudgeBatch, client: openai.OpenAI) -> None:
    """Upload the input file and create the batch, each step saved before the next."""
    resumed = bool(batch.input_file_id)
    if not batch.input_file_id:
        lines = [
            {"custom_id": key, "method": "POST", "url": batchlib.BATCH_URL, "body": stored["line"]}
            for key, stored in sorted(batch.requests.items())
        ]
        uploaded = _api(
            lambda: client.files.create(
                file=(f"judge-batch-{batch.pk}.jsonl", batchlib.jsonl_encode(lines)), purpose="batch"
            ),
            "upload the batch file",
        )
        _save(batch, input_file_id=uploaded.id)
    tag = str(batch.pk)
    if resumed:
        # A worker may have died between creating the batch and saving its id: adopt that batch.
        listed = _api(lambda: client.batches.list(limit=100), "list batches")
        adopted = next(
            (
                b
                for b in listed.data
                if (b.metadata or {}).get(METADATA_KEY) == tag and b.input_file_id == batch.input_file_id
            ),
            None,
        )
        if adopted is not None:
            _save(batch, provider_batch_id=adopted.id, submitted_at=timezone.now())
            _remote_state(batch, adopted)
            return
    created = _api(
        lambda: client.batches.create(
            input_file_id=batch.input_file_id,
            endpoint=batchlib.BATCH_URL,
            completion_window=batchlib.COMPLETION_WINDOW,
            metadata={METADATA_KEY: tag},
        ),
        "create the batch",
    )
    _save(batch, provider_batch_id=created.id, submitted_at=timezone.now())
    _remote_state(batch, created)


def _download(client: openai.OpenAI, file_id: str) -> str:
    if not file_id:
        return ""
    return _api(lambda: client.files.content(file_id), "download a batch file").text


def _unrun_reason(batch: JudgeBatch) -> str:
    """Why the batch ran none of the lines that are on no line of its files, in the provider's words."""
    where = batch.provider_batch_id or "not at the provider"
    if batch.status == JudgeBatch.Status.FAILED:
        return f"not run: batch {where} failed: {batch.error or 'the provider gave no reason'}"
    if batch.status == JudgeBatch.Status.EXPIRED:
        return f"not run: batch {where} expired before this line ran"
    if batch.status == JudgeBatch.Status.CANCELLED:
        return f"not run: batch {where} was cancelled at the provider"
    return ""


def _batch_collect(batch: JudgeBatch, output: str, errors: str, endpoint: ModelEndpoint) -> None:
    """Read a finished batch's files into the ledger. Lines the batch never ran fail with the batch's reason
    (validation errors naming their input line give that line its own); those of an expired batch are
    left for another batch of the run while they have expired fewer than batchlib.MAX_EXPIRY_RESUBMISSIONS + 1 times."""
    keys = sorted(batch.requests)  # the input file's order (`_submit`)
    by_line = {
        keys[e["line"] - 1]: f"rejected at validation: {batchlib.validation_error_text(e)}"
        for e in batch.validation_errors or []
        if e.get("line") and 0 < e["line"] <= len(keys)
    }
    results = batchlib.batch_results(output, errors, keys, missing=_unrun_reason(batch), by_line=by_line)
    final = batch.status
    unrun = {
        key
        for key, outcome in results.outcomes.items()
        if not outcome.ok and (outcome.unrun or (outcome.code == "missing" and final != JudgeBatch.Status.COMPLETED))
    }
    resubmit: set[str] = set()
    if final == JudgeBatch.Status.EXPIRED and unrun:
        earlier = [
            b.requests
            for b in JudgeBatch.objects.filter(run_id=batch.run_id, final_status=JudgeBatch.Status.EXPIRED).exclude(
                pk=batch.pk
            )
        ]
        for key in unrun:
            expired = 1 + sum(1 for requests in earlier if key in requests)
            if expired <= batchlib.MAX_EXPIRY_RESUBMISSIONS:
                resubmit.add(key)
            else:
                results.outcomes[key] = batchlib.LineOutcome(
                    key,
                    False,
                    error=f"batch line: not run: its batch expired {expired} times "
                    f"(sent again at most {batchlib.MAX_EXPIRY_RESUBMISSIONS} times in a run)",
                    code="batch_expired",
                )
    _collect(batch, results, endpoint, final_status=final, unrun=len(unrun), resubmit=frozenset(resubmit))


def batch_follow(
    *, batch: JudgeBatch, endpoint: ModelEndpoint, keep_alive: Callable[[], None] = lambda: None
) -> JudgeBatch:
    """Take a batch to collected: submit it if it is not at the provider yet, poll it until it ends,
    download its output and error files and write every line into the ledger. `keep_alive` runs at
    each poll (the run renews its lease there, and raises if it lost it)."""
    client = batch_client(endpoint)
    try:
        if batch.status == JudgeBatch.Status.PREPARING:
            try:
                _submit(batch, client)
            except BatchApiError as exc:
                _save(batch, status=JudgeBatch.Status.FAILED, error=str(exc)[:2000])
        while batch.status in batchlib.OPEN_STATES:
            keep_alive()
            time.sleep(poll_seconds())
            try:
                _remote_state(batch, _api(lambda: client.batches.retrieve(batch.provider_batch_id), "poll the batch"))
            except BatchApiError as exc:
                _save(batch, status=JudgeBatch.Status.FAILED, error=str(exc)[:2000])
        if batch.status in batchlib.FINAL_STATES:
            keep_alive()
            try:
                output = _download(client, batch.output_file_id)
                errors = _download(client, batch.error_file_id)
            except BatchApiError as exc:
                # Lines that cannot be fetched are failed calls like any other: a later run asks again.
                output, errors = "", ""
                _save(batch, error=f"{batch.error}\n{exc}".strip()[:2000])
            _batch_collect(batch, output, errors, endpoint)
    finally:
        client.close()
    batch.refresh_from_db()
    return batch


# --- a run's turns, round by round -----------------------------------------------------------------


def turns_judge_by_batch(
    *,
    run: JudgeRun,
    turns: Sequence[TurnToJudge],
    endpoint: ModelEndpoint,
    template: str,
    max_reasks: int = DEFAULT_MAX_REASKS,
    allowed: dict | None = None,
    keep_alive: Callable[[], None] = lambda: None,
) -> list[TurnJudgement]:
    """Judge the turns through the Batch API: each round asks, in one batch, every request the ledger
    does not hold yet; the turns are then judged from the ledger (`audits.llm.batch`). Returns one
    judgement per turn, in order. Blocking (polls); run it from a worker."""
    if not endpoint.batch_capable or endpoint.is_simulation:
        raise BatchNotPossible(f"{endpoint} is not marked batch-capable")
    config = endpoint.to_config()
    answers: dict[str, batchlib.KnownAnswer] = {}
    checked: set[str] = set()  # keys looked up and found absent (or failed in an earlier run)
    while True:
        result = batchlib.judgements_from_answers(
            turns, config, answers, template=template, max_reasks=max_reasks, allowed=allowed
        )
        unknown = [key for key in result.missing if key not in checked]
        if unknown:
            found, absent = _known_answers(unknown, run)
            answers.update(found)
            checked |= absent
            continue
        JudgeRun.objects.filter(pk=run.pk).update(judged=result.concluded)
        if not result.missing:
            _ledger_reject(result.rejected)
            return list(result.judgements)
        cancelled = JudgeRun.objects.filter(pk=run.pk).values_list("cancel_requested_at", flat=True).first()
        if cancelled is not None:
            # Cancelled: nothing more is sent; the turns still waiting for an answer conclude as failed.
            for key in result.missing:
                answers[key] = batchlib.KnownAnswer(
                    batchlib.STATUS_FAILED, error=f"not asked: the run was cancelled at {cancelled:%Y-%m-%d %H:%M}"
                )
            continue
        # More requests than one batch file may hold go in several batches, one after the other.
        for chunk in batchlib.request_chunks(result.missing):
            batch = _batch_for_round(run, endpoint, chunk)
            batch_follow(batch=batch, endpoint=endpoint, keep_alive=keep_alive)
        checked.clear()  # the batches wrote rows under these keys; look again


def lines_sent(run: JudgeRun) -> int:
    """Calls of a run that reached the provider and were run there: the lines of its batches that the
    provider took, less those it never ran (rejected at validation, expired, cancelled)."""
    total = 0
    for lines, unrun, status, errors in run.batches.exclude(provider_batch_id="").values_list(
        "lines", "unrun", "status", "validation_errors"
    ):
        if status == JudgeBatch.Status.FAILED and errors:
            continue
        total += max(0, lines - unrun)
    return total


def run_batches_cancel(run: JudgeRun) -> list[str]:
    """Ask the provider to cancel the run's open batches (the worker that follows them collects what they
    finished). Returns the provider's ids of the batches it now cancels; raises BatchApiError when the
    provider refuses."""
    open_batches = run.batches.exclude(provider_batch_id="").filter(status__in=batchlib.OPEN_STATES)
    cancelled = []
    if not open_batches.exists():
        return cancelled
    client = batch_client(run.endpoint)
    try:
        for batch in open_batches:
            if batch.status == JudgeBatch.Status.CANCELLING:
                continue
            remote = _api(lambda b=batch: client.batches.cancel(b.provider_batch_id), "cancel the batch")
            _save(batch, status=remote.status, polled_at=timezone.now())
            cancelled.append(batch.provider_batch_id)
    finally:
        client.close()
    return cancelled
