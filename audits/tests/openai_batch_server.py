"""The local OpenAI-protocol test server (`audits.tests.openai_server`) with the files and batches
endpoints of the Batch API: upload a JSONL file (POST /v1/files, purpose=batch), create a batch over it
(POST /v1/batches), poll it (GET /v1/batches/{id}, GET /v1/batches), download the output and error files
(GET /v1/files/{id}/content).

A batch stays in progress for `batch_seconds`, then its lines are answered the way chat calls are (the
same content) into an output file; the first `fail_lines` lines answered go to the error file with a 500
instead. Every batch created and every line answered is counted, beside the chat calls the base server
counts, so a test can show that nothing was asked twice.
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
    files: dict[str, dict] = field(default_factory=dict)
    batches: dict[str, dict] = field(default_factory=dict)
    lines_answered: Counter = field(default_factory=Counter)  # custom_id -> times answered
    lock: threading.Lock = field(default_factory=threading.Lock)


class BatchTestServer(OpenAITestServer):
    def __init__(self, *, batch_seconds: float = 1.0, fail_lines: int = 0, **kwargs) -> None:
        super().__init__(**kwargs)
        self.batch = BatchState(batch_seconds=batch_seconds, fail_lines=fail_lines)

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

        def finish(row: dict) -> None:
            """Answer every line of a batch whose time is up (called under the lock)."""
            if row["status"] != "in_progress" or time.time() < row["due"]:
                return
            output, errors = [], []
            for raw in batch.files[row["input_file_id"]]["content"].decode().splitlines():
                if not raw.strip():
                    continue
                line = json.loads(raw)
                custom_id = line["custom_id"]
                batch.lines_answered[custom_id] += 1
                if batch.fail_lines > 0:
                    batch.fail_lines -= 1
                    errors.append(
                        {
                            "id": f"batch_req_{uuid.uuid4().hex[:8]}",
                            "custom_id": custom_id,
                            "response": {"status_code": 500, "body": {"error": {"message": "line failed"}}},
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

            row["output_file_id"] = new_file(jsonl(output), "output.jsonl", "batch_output") if output else None
            row["error_file_id"] = new_file(jsonl(errors), "errors.jsonl", "batch_output") if errors else None
            row["request_counts"] = {
                "total": len(output) + len(errors),
                "completed": len(output),
                "failed": len(errors),
            }
            row["status"] = "completed"
            row["completed_at"] = int(time.time())

        def batch_object(batch_id: str) -> dict:
            row = batch.batches[batch_id]
            finish(row)
            return {key: value for key, value in row.items() if key != "due"}

        async def files_create(request: web.Request) -> web.Response:
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
                batch.batches[batch_id] = {
                    "id": batch_id,
                    "object": "batch",
                    "endpoint": data.get("endpoint"),
                    "input_file_id": data["input_file_id"],
                    "completion_window": data.get("completion_window"),
                    "status": "in_progress",
                    "output_file_id": None,
                    "error_file_id": None,
                    "created_at": int(time.time()),
                    "request_counts": {"total": lines, "completed": 0, "failed": 0},
                    "metadata": data.get("metadata") or {},
                    "due": time.time() + batch.batch_seconds,
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

        app.router.add_post("/v1/files", files_create)
        app.router.add_get("/v1/files/{file_id}/content", file_content)
        app.router.add_post("/v1/batches", batches_create)
        app.router.add_get("/v1/batches", batches_list)
        app.router.add_get("/v1/batches/{batch_id}", batches_get)
        return app


class _NoHeaders:
    """Batch lines carry no headers: the purpose is read from the request body, as for a bare client."""

    headers: dict = {}
