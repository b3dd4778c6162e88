"""The local OpenAI-protocol test server (`audits.tests.openai_server`) with the files and batches
endpoints of the Batch API: upload a JSONL file (POST /v1/files, purpose=batch), create a batch over it
(POST /v1/batches), poll it (GET /v1/batches/{id}, GET /v1/batches), download the output and error files
(GET /v1/files/{id}/content).

A batch stays in progress for `batch_seconds`, then its lines are answered the way chat calls are (the
same content) into an output file; the first `fail_lines` lines answered go to the error file with a 500
instead. Every batch created and every line answered is counted, beside the chat calls the base server
counts, so a test can show that nothing was asked twice.

It ends batches the other ways OpenAI documents, when told to. Batch objects carry `errors: {"object":
"list", "data": [...]}`, `request_counts`, `output_file_id` and `error_file_id` as OpenAI's do.
- `validation_errors` (a list of {code, message, param, line}): the next batches created fail at
  validation (`validating`, then `failed` with those errors, no output file, nothing run).
- `fates`: a queue, one entry per batch created next: ("expire", k) runs its first k lines and expires,
  the rest in the error file with code `batch_expired`; ("cancel", k) runs k lines and is cancelled at the
  provider (the rest on no line).
- POST /v1/batches/{id}/cancel: the batch is `cancelling`, then `cancelled` with `cancel_keep` lines run.
- `batch_api=False`: a server with chat completions only (vLLM's answer to an unknown path: 404 with
  `{"detail": "Not Found"}`) — no files, no batches.
- `upload_status`: uploads are refused with this status.
- `error_bodies`: a queue of bodies for the next failed lines' `response.body` (a vLLM error object, a
  plain string), in place of OpenAI's error object.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field

from aiohttp import web

from audits.tests.openai_server import CONTENT, OpenAITestServer, _purpose, build_app, tutor_reply


@dataclass
class BatchState:
    batch_seconds: float = 1.0
    fail_lines: int = 0
    batch_api: bool = True
    validation_errors: list[dict] = field(default_factory=list)
    fates: list[tuple[str, int]] = field(default_factory=list)
    cancel_keep: int = 0
    error_bodies: list = field(default_factory=list)
    upload_status: int = 0  # when set, POST /v1/files answers this status (an upload the provider refuses)
    files: dict[str, dict] = field(default_factory=dict)
    batches: dict[str, dict] = field(default_factory=dict)
    lines_answered: Counter = field(default_factory=Counter)  # custom_id -> times answered
    api_requests: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


class BatchTestServer(OpenAITestServer):
    def __init__(self, *, batch_seconds: float = 1.0, fail_lines: int = 0, batch_api: bool = True, **kwargs) -> None:
        super().__init__(**kwargs)
        self.batch = BatchState(batch_seconds=batch_seconds, fail_lines=fail_lines, batch_api=batch_api)

    @property
    def batch_requests(self) -> int:
        """Requests to the files and batches endpoints (answered or refused)."""
        with self.batch.lock:
            return self.batch.api_requests

    @property
    def batches_created(self) -> int:
        with self.batch.lock:
            return len(self.batch.batches)

    @property
    def lines_answered(self) -> Counter:
        with self.batch.lock:
            return Counter(self.batch.lines_answered)

    def build_app(self) -> web.Application:
        app = build_app(self.state)
        batch = self.batch
        chat = self.state

        def file_object(file_id: str) -> dict:
            row = batch.files[file_id]
            return {
                "id": file_id,
                "object": "file",
                "bytes": len(row["content"]),
                "created_at": row["created_at"],
                "filename": row["filename"],
                "purpose": row["purpose"],
                "status": "processed",
            }

        def new_file(content: bytes, filename: str, purpose: str) -> str:
            file_id = f"file-{uuid.uuid4().hex[:16]}"
            batch.files[file_id] = {
                "content": content,
                "filename": filename,
                "purpose": purpose,
                "created_at": int(time.time()),
            }
            return file_id

        def answer_line(line: dict) -> dict:
            body = line.get("body") or {}
            messages = body.get("messages", [])
            purpose = _purpose(_NoHeaders(), body)
            if chat.behaviour is not None:
                content = chat.behaviour.reply(purpose, messages, body.get("model", ""))
            else:
                content = CONTENT.get(purpose, tutor_reply)(messages)
            words = sum(len(str(m.get("content", "")).split()) for m in messages)
            return {
                "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body.get("model", "test-model"),
                "choices": [
                    {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
                ],
                "usage": {"prompt_tokens": words, "completion_tokens": len(content.split())},
            }

        def run_lines(row: dict, keep: int | None, unrun_code: str = "") -> None:
            """Answer the batch's first `keep` lines (all: None); the others go to the error file with
            `unrun_code`, or on no line (called under the lock)."""
            output, errors = [], []
            raws = [raw for raw in batch.files[row["input_file_id"]]["content"].decode().splitlines() if raw.strip()]
            for index, raw in enumerate(raws):
                line = json.loads(raw)
                custom_id = line["custom_id"]
                if keep is not None and index >= keep:
                    if unrun_code:
                        errors.append(
                            {
                                "id": f"batch_req_{uuid.uuid4().hex[:8]}",
                                "custom_id": custom_id,
                                "response": None,
                                "error": {
                                    "code": unrun_code,
                                    "message": "This request could not be executed before the completion window "
                                    "expired.",
                                },
                            }
                        )
                    continue
                batch.lines_answered[custom_id] += 1
                if batch.fail_lines > 0:
                    batch.fail_lines -= 1
                    body = batch.error_bodies.pop(0) if batch.error_bodies else {"error": {"message": "line failed"}}
                    errors.append(
                        {
                            "id": f"batch_req_{uuid.uuid4().hex[:8]}",
                            "custom_id": custom_id,
                            "response": {"status_code": 500, "body": body},
                            "error": None,
                        }
                    )
                    continue
                output.append(
                    {
                        "id": f"batch_req_{uuid.uuid4().hex[:8]}",
                        "custom_id": custom_id,
                        "response": {"status_code": 200, "request_id": uuid.uuid4().hex, "body": answer_line(line)},
                        "error": None,
                    }
                )

            def jsonl(rows):
                return "".join(json.dumps(r) + "\n" for r in rows).encode()

            failed = sum(1 for e in errors if e["response"] is not None)
            row["output_file_id"] = new_file(jsonl(output), "output.jsonl", "batch_output") if output else None
            row["error_file_id"] = new_file(jsonl(errors), "errors.jsonl", "batch_output") if errors else None
            row["request_counts"] = {"total": len(raws), "completed": len(output), "failed": failed}

        def finish(row: dict) -> None:
            """Move a batch on when its time is up (called under the lock)."""
            now = int(time.time())
            if row["status"] == "validating" and row["invalid"]:
                row.update(status="failed", failed_at=now)
                row["errors"] = {"object": "list", "data": row["invalid"]}
                return
            if row["status"] == "cancelling":
                run_lines(row, batch.cancel_keep)
                row.update(status="cancelled", cancelled_at=now)
                return
            if row["status"] != "in_progress" or time.time() < row["due"]:
                return
            fate, keep = row["fate"]
            if fate == "expire":
                run_lines(row, keep, "batch_expired")
                row.update(status="expired", expired_at=now)
            elif fate == "cancel":
                run_lines(row, keep)
                row.update(status="cancelled", cancelling_at=now, cancelled_at=now)
            else:
                run_lines(row, None)
                row.update(status="completed", completed_at=now)

        def batch_object(batch_id: str) -> dict:
            row = batch.batches[batch_id]
            finish(row)
            return {key: value for key, value in row.items() if key not in ("due", "fate", "invalid")}

        async def files_create(request: web.Request) -> web.Response:
            if batch.upload_status:
                message = {"error": {"message": "Files are not accepted here.", "type": "invalid_request_error"}}
                return web.json_response(message, status=batch.upload_status)
            form = await request.post()
            upload = form["file"]
            content = upload.file.read()
            with batch.lock:
                file_id = new_file(content, upload.filename, str(form.get("purpose", "")))
                return web.json_response(file_object(file_id))

        async def file_content(request: web.Request) -> web.Response:
            with batch.lock:
                row = batch.files.get(request.match_info["file_id"])
            if row is None:
                return web.json_response({"error": {"message": "no such file"}}, status=404)
            return web.Response(body=row["content"], content_type="application/octet-stream")

        async def batches_create(request: web.Request) -> web.Response:
            data = await request.json()
            with batch.lock:
                if data.get("input_file_id") not in batch.files:
                    return web.json_response({"error": {"message": "no such file"}}, status=400)
                batch_id = f"batch_{uuid.uuid4().hex[:16]}"
                lines = batch.files[data["input_file_id"]]["content"].decode().count("\n")
                invalid = [dict(e) for e in batch.validation_errors]
                batch.batches[batch_id] = {
                    "id": batch_id,
                    "object": "batch",
                    "endpoint": data.get("endpoint"),
                    "errors": None,
                    "input_file_id": data["input_file_id"],
                    "completion_window": data.get("completion_window"),
                    "status": "validating" if invalid else "in_progress",
                    "output_file_id": None,
                    "error_file_id": None,
                    "created_at": int(time.time()),
                    "request_counts": {"total": 0 if invalid else lines, "completed": 0, "failed": 0},
                    "metadata": data.get("metadata") or {},
                    "due": time.time() + batch.batch_seconds,
                    "fate": batch.fates.pop(0) if batch.fates and not invalid else ("complete", 0),
                    "invalid": invalid,
                }
                return web.json_response(batch_object(batch_id))

        async def batches_get(request: web.Request) -> web.Response:
            with batch.lock:
                if request.match_info["batch_id"] not in batch.batches:
                    return web.json_response({"error": {"message": "no such batch"}}, status=404)
                return web.json_response(batch_object(request.match_info["batch_id"]))

        async def batches_list(request: web.Request) -> web.Response:
            with batch.lock:
                data = [batch_object(batch_id) for batch_id in reversed(list(batch.batches))]
            return web.json_response({"object": "list", "data": data, "has_more": False})

        async def batches_cancel(request: web.Request) -> web.Response:
            with batch.lock:
                row = batch.batches.get(request.match_info["batch_id"])
                if row is None:
                    return web.json_response({"error": {"message": "no such batch"}}, status=404)
                finish(row)
                if row["status"] in ("validating", "in_progress", "finalizing"):
                    row.update(status="cancelling", cancelling_at=int(time.time()))
                return web.json_response(batch_object(row["id"]))

        async def files_list(request: web.Request) -> web.Response:
            with batch.lock:
                data = [file_object(file_id) for file_id in batch.files]
            return web.json_response({"object": "list", "data": data[: int(request.query.get("limit", 10000))]})

        @web.middleware
        async def batch_api_only_if_served(request: web.Request, handler):
            if request.path.startswith(("/v1/files", "/v1/batches")):
                with batch.lock:
                    batch.api_requests += 1
                if not batch.batch_api:
                    return web.json_response({"detail": "Not Found"}, status=404)
            return await handler(request)

        app.middlewares.append(batch_api_only_if_served)
        app.router.add_post("/v1/files", files_create)
        app.router.add_get("/v1/files", files_list)
        app.router.add_get("/v1/files/{file_id}/content", file_content)
        app.router.add_post("/v1/batches", batches_create)
        app.router.add_get("/v1/batches", batches_list)
        app.router.add_get("/v1/batches/{batch_id}", batches_get)
        app.router.add_post("/v1/batches/{batch_id}/cancel", batches_cancel)
        return app


class _NoHeaders:
    """Batch lines carry no headers: the purpose is read from the request body, as for a bare client."""

    headers: dict = {}
