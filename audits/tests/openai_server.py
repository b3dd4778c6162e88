"""A local server that speaks the OpenAI chat-completions protocol, for tests and benchmarks.

It answers `POST /v1/chat/completions` with valid tutor, student, reveal-check and judge content
(the purpose comes from the `X-EduFair-Purpose` header the client sends), after an optional fixed
delay, and can be told to misbehave on the next requests of a purpose: 429 with Retry-After, 500,
hang past the client's timeout, truncated JSON, empty content, or a judge that answers in prose.
It counts every request it served, so a test can hold the ledger against it. It can enforce a
requests-per-minute budget (`rpm`, over a sliding `rpm_window` of seconds, as providers quantise their
limits) and answer 429 with Retry-After beyond it, and report another model name than the one asked
for (`reported_model`: the model behind the URL was swapped).

In a test: `with OpenAITestServer() as server: ... server.base_url ...`.
As a process (benchmarks): `python -m audits.tests.openai_server --port 0 --delay 0.2` prints
`listening on PORT` and serves until killed.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import threading
import time
from collections import Counter, deque
from dataclasses import dataclass, field

from aiohttp import web

REVEAL_PHRASE = "So the final answer is"
CONFIRM_PHRASE = "Exactly right"


@dataclass
class ServedRequest:
    purpose: str
    body_hash: str
    status: int
    fault: str = ""
    messages_key: str = ""  # `messages_key(purpose, messages)`: matches a ledger row's request
    body: dict | None = None  # the JSON body as sent


def messages_key(purpose: str, messages: list[dict]) -> str:
    """Identify a request by what a ledger row stores of it (purpose and messages)."""
    canonical = json.dumps([purpose, messages], sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


@dataclass
class Fault:
    kind: str  # "429" | "500" | "timeout" | "truncated" | "empty" | "prose"
    retry_after: float = 1.0
    hang: float = 5.0
    # Only for requests whose message texts contain every one of these strings (empty: any request).
    match: tuple[str, ...] = ()


def _purpose(request: web.Request, body: dict) -> str:
    header = request.headers.get("X-EduFair-Purpose")
    if header:
        return header
    text = json.dumps(body.get("messages", []))
    if "mistake_recognize" in text:
        return "judge"
    if '\\"revealed\\"' in text or '"revealed"' in text:
        return "check"
    return "tutor"


def tutor_reply(messages: list[dict]) -> str:
    own_turns = sum(1 for m in messages if m.get("role") == "assistant")
    if own_turns >= 2:
        return f"You worked hard on this. {REVEAL_PHRASE} 42, because six times seven is forty-two."
    hints = [
        "Let's slow down. What quantity does the problem ask for, and what do you already know?",
        "Good try. Look again at your second step: what happens when you multiply instead of add?",
    ]
    return hints[own_turns]


def student_reply(messages: list[dict], distinct: bool = False) -> str:
    own_turns = sum(1 for m in messages if m.get("role") == "assistant")
    # With `distinct`, each persona (system prompt) speaks a little differently, so no two dialogues
    # share a request (benchmarks want every call to be a real one).
    tag = f" (student {hashlib.sha256(str(messages[0]).encode()).hexdigest()[:6]})" if distinct and messages else ""
    if own_turns == 0:
        return f"Hi, I'm a student{tag}. The problem asks for six times seven. My first try: 13."
    return f"Hmm, maybe it is {40 + own_turns}?{tag}"


def check_reply(messages: list[dict]) -> str:
    text = messages[0].get("content", "") if messages else ""
    return json.dumps({"revealed": REVEAL_PHRASE in text, "confirmed": CONFIRM_PHRASE in text})


def judge_reply(messages: list[dict]) -> str:
    text = messages[0].get("content", "") if messages else ""
    revealed = REVEAL_PHRASE in text
    return json.dumps(
        {
            "mistake_recognize": 1 if "second step" in text else 0,
            "answer_leakage": 2 if revealed else 0,
            "step_scaffolded": -1 if revealed else 2,
            "actionability": 1,
            "corrective_tone": 2,
        }
    )


CONTENT = {"tutor": tutor_reply, "student": student_reply, "check": check_reply, "judge": judge_reply}


@dataclass
class ServerState:
    delay: float = 0.0
    distinct_students: bool = False
    # Anything with reply(purpose, messages, model) -> str answers instead of the fixed replies
    # (audits.tests.varied_tutoring.VariedTutoring: varied, fair or planted-bias tutoring).
    behaviour: object | None = None
    rpm: int | None = None
    rpm_window: float = 60.0
    accepted_at: deque = field(default_factory=deque)  # times of requests let through the budget
    reported_model: str = ""
    in_flight: int = 0
    max_in_flight: int = 0
    busy_seconds: float = 0.0  # summed time requests spent in the server (for mean concurrency)
    first_at: float = 0.0
    last_at: float = 0.0
    faults: dict[str, deque] = field(default_factory=dict)
    served: list[ServedRequest] = field(default_factory=list)
    served_at: list[float] = field(default_factory=list)  # monotonic time of each entry of `served`
    authorizations: set[str] = field(default_factory=set)  # Authorization headers seen
    lock: threading.Lock = field(default_factory=threading.Lock)

    def next_fault(self, purpose: str, text: str) -> Fault | None:
        with self.lock:
            for key in (purpose, "*"):
                queue = self.faults.get(key) or deque()
                for fault in queue:
                    if all(part in text for part in fault.match):
                        queue.remove(fault)
                        return fault
        return None

    def over_budget(self, now: float) -> float | None:
        """None when a request may pass the RPM budget now (it is counted); else seconds to wait."""
        if not self.rpm:
            return None
        allowed = max(1, int(self.rpm * self.rpm_window / 60))
        with self.lock:
            while self.accepted_at and self.accepted_at[0] <= now - self.rpm_window:
                self.accepted_at.popleft()
            if len(self.accepted_at) >= allowed:
                return self.accepted_at[0] + self.rpm_window - now
            self.accepted_at.append(now)
        return None


def build_app(state: ServerState) -> web.Application:
    async def completions(request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        with state.lock:
            state.authorizations.add(request.headers.get("Authorization", ""))
        body = json.loads(raw)
        purpose = _purpose(request, body)
        body_hash = hashlib.sha256(raw).hexdigest()
        fault = state.next_fault(purpose, "\n".join(str(m.get("content", "")) for m in body.get("messages", [])))
        started = time.monotonic()
        wait = state.over_budget(started)
        if wait is not None and not fault:
            fault = Fault("429", retry_after=max(0.05, round(wait, 3)))
        with state.lock:
            state.in_flight += 1
            state.max_in_flight = max(state.max_in_flight, state.in_flight)
            state.first_at = state.first_at or started
        try:
            if state.delay:
                await asyncio.sleep(state.delay)
            return await answer(request, body, purpose, body_hash, fault)
        finally:
            ended = time.monotonic()
            with state.lock:
                state.in_flight -= 1
                state.busy_seconds += ended - started
                state.last_at = ended

    async def answer(request, body, purpose, body_hash, fault) -> web.StreamResponse:

        def served(status: int) -> None:
            with state.lock:
                state.served_at.append(time.monotonic())
                state.served.append(
                    ServedRequest(
                        purpose,
                        body_hash,
                        status,
                        fault.kind if fault else "",
                        messages_key(purpose, body.get("messages", [])),
                        body,
                    )
                )

        if fault and fault.kind == "429":
            served(429)
            return web.json_response(
                {"error": {"message": "rate limited", "type": "rate_limit"}},
                status=429,
                headers={"Retry-After": f"{fault.retry_after:g}"},
            )
        if fault and fault.kind == "500":
            served(500)
            return web.json_response({"error": {"message": "boom", "type": "server_error"}}, status=500)
        if fault and fault.kind == "timeout":
            served(0)
            await asyncio.sleep(fault.hang)
        messages = body.get("messages", [])
        if state.behaviour is not None:
            content = state.behaviour.reply(purpose, messages, body.get("model", ""))
        elif purpose == "student":
            content = student_reply(messages, distinct=state.distinct_students)
        else:
            content = CONTENT.get(purpose, tutor_reply)(messages)
        if fault and fault.kind == "truncated":
            content = content[: max(1, len(content) // 2)]
        elif fault and fault.kind == "empty":
            content = ""
        elif fault and fault.kind == "prose":
            content = "The tutor was quite helpful here and I would rate the turn highly overall."
        if not (fault and fault.kind == "timeout"):
            served(200)
        words = sum(len(str(m.get("content", "")).split()) for m in messages)
        return web.json_response(
            {
                "id": f"chatcmpl-{body_hash[:12]}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": state.reported_model or body.get("model", "test-model"),
                "choices": [
                    {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
                ],
                "usage": {
                    "prompt_tokens": words,
                    "completion_tokens": len(content.split()),
                    "total_tokens": words + len(content.split()),
                },
            }
        )

    async def stats(request: web.Request) -> web.Response:
        with state.lock:
            wall = (state.last_at - state.first_at) if state.first_at else 0.0
            return web.json_response(
                {
                    "requests": len(state.served),
                    "max_in_flight": state.max_in_flight,
                    "busy_seconds": state.busy_seconds,
                    "wall_seconds": wall,
                    "mean_in_flight": state.busy_seconds / wall if wall else 0.0,
                }
            )

    async def reset(request: web.Request) -> web.Response:
        with state.lock:
            state.served.clear()
            state.served_at.clear()
            state.max_in_flight = 0
            state.busy_seconds = 0.0
            state.first_at = state.last_at = 0.0
        return web.json_response({"ok": True})

    app = web.Application()
    app.router.add_post("/v1/chat/completions", completions)
    app.router.add_get("/stats", stats)
    app.router.add_post("/reset", reset)
    return app


class OpenAITestServer:
    """The server on a thread of its own, on a free port of 127.0.0.1 (or another loopback address, `host`)."""

    def __init__(self, delay: float = 0.0, behaviour: object | None = None, host: str = "127.0.0.1") -> None:
        self.state = ServerState(delay=delay, behaviour=behaviour)
        self.host = host
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: web.AppRunner | None = None
        self.port = 0

    def build_app(self) -> web.Application:
        return build_app(self.state)

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def plan(self, purpose: str, *faults: Fault | str) -> None:
        """Misbehave on the next requests of `purpose` ("*" = any), in order."""
        with self.state.lock:
            queue = self.state.faults.setdefault(purpose, deque())
            queue.extend(Fault(f) if isinstance(f, str) else f for f in faults)

    @property
    def served(self) -> list[ServedRequest]:
        with self.state.lock:
            return list(self.state.served)

    def counts(self) -> Counter:
        return Counter(r.purpose for r in self.served)

    def start(self) -> OpenAITestServer:
        ready = threading.Event()

        def run() -> None:
            self._loop = asyncio.new_event_loop()
            asyncio.set_event_loop(self._loop)
            self._runner = web.AppRunner(self.build_app(), access_log=None)
            self._loop.run_until_complete(self._runner.setup())
            site = web.TCPSite(self._runner, self.host, 0)
            self._loop.run_until_complete(site.start())
            self.port = site._server.sockets[0].getsockname()[1]
            ready.set()
            self._loop.run_forever()
            self._loop.run_until_complete(self._runner.cleanup())
            self._loop.close()

        self._thread = threading.Thread(target=run, name="openai-test-server", daemon=True)
        self._thread.start()
        ready.wait(10)
        return self

    def stop(self) -> None:
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(10)

    def __enter__(self) -> OpenAITestServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--delay", type=float, default=0.0, help="Seconds before each answer.")
    parser.add_argument("--distinct-students", action="store_true", help="No two personas share a reply.")
    args = parser.parse_args()
    state = ServerState(delay=args.delay, distinct_students=args.distinct_students)

    async def serve() -> None:
        runner = web.AppRunner(build_app(state), access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, args.host, args.port, backlog=1024)
        await site.start()
        print(f"listening on {site._server.sockets[0].getsockname()[1]}", flush=True)
        while True:
            await asyncio.sleep(3600)

    asyncio.run(serve())


if __name__ == "__main__":
    main()
