"""A fault-injecting HTTP proxy for tests: it stands in front of an OpenAI-protocol server (the local
`OpenAITestServer`) and spoils some replies the way real endpoints do.

Faults: `429` (with Retry-After), `500`, `slow` (answers after the client's timeout), `truncated` (the
JSON body cut in half), `html` (an HTML error page with status 200), `not_completion` (JSON that is
not a chat completion), `no_choices`, and two that arrive as valid completions whose content the caller
cannot use: `judge_prose` (a judge reply in prose) and `check_prose` (a reveal check in prose). They
apply either in a planned order (`plan`, for exact tests) or at random with given rates (`rates`, for
drills); `stop_faults()` turns both off. The random draw comes from the seed, the request body and how
many times that body came before, not from arrival order: a drill with a deterministic server spoils
the same requests on every run, however its dialogues interleave. Every request it received is in
`served`, so a test can hold the ledger's attempts against it.

Not a test module. `with FaultProxy(server.base_url, rates={...}) as proxy: ... proxy.base_url ...`
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import threading
from collections import Counter, deque
from dataclasses import dataclass

from aiohttp import ClientSession, web

CONTENT_FAULTS = {"judge_prose": "judge", "check_prose": "check"}
PROSE = {
    "judge": "The tutor was quite helpful here and I would rate the turn highly overall.",
    "check": "The tutor seems to be guiding the student without giving too much away.",
}
HTML_PAGE = "<html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1></body></html>"


@dataclass(frozen=True)
class ProxiedRequest:
    purpose: str
    fault: str  # "" when passed through untouched
    status: int


class FaultProxy:
    """The proxy on a thread of its own, on a free port of 127.0.0.1."""

    def __init__(
        self,
        upstream_base_url: str,
        *,
        rates: dict[str, float] | None = None,
        seed: int = 0,
        retry_after: float = 0.05,
        hang: float = 1.0,
    ) -> None:
        self.upstream = upstream_base_url.rstrip("/")
        self.rates = dict(rates or {})
        self.retry_after = retry_after
        self.hang = hang
        self.seed = seed
        self._seen: Counter = Counter()
        self._planned: deque[str] = deque()
        self._lock = threading.Lock()
        self._served: list[ProxiedRequest] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self.port = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def served(self) -> list[ProxiedRequest]:
        with self._lock:
            return list(self._served)

    def faults(self) -> Counter:
        return Counter(r.fault for r in self.served if r.fault)

    def plan(self, *kinds: str) -> None:
        """Spoil the next requests in this order (a content fault waits for a request of its purpose)."""
        with self._lock:
            self._planned.extend(kinds)

    def stop_faults(self) -> None:
        with self._lock:
            self._planned.clear()
            self.rates = {}

    def _draw(self, body: bytes) -> float:
        digest = hashlib.sha256(body).hexdigest()
        self._seen[digest] += 1
        value = hashlib.sha256(f"{self.seed}:{digest}:{self._seen[digest]}".encode()).hexdigest()
        return int(value[:13], 16) / 16**13

    def _choose(self, purpose: str, body: bytes) -> str:
        with self._lock:
            if self._planned:
                head = self._planned[0]
                if CONTENT_FAULTS.get(head, purpose) != purpose:
                    return ""
                return self._planned.popleft()
            draw = self._draw(body)
            for kind, rate in self.rates.items():
                if CONTENT_FAULTS.get(kind, purpose) != purpose:
                    continue
                if draw < rate:
                    return kind
                draw -= rate
        return ""

    def _record(self, purpose: str, fault: str, status: int) -> None:
        with self._lock:
            self._served.append(ProxiedRequest(purpose, fault, status))

    def _app(self) -> web.Application:
        session: dict[str, ClientSession] = {}

        async def completions(request: web.Request) -> web.StreamResponse:
            raw = await request.read()
            purpose = request.headers.get("X-EduFair-Purpose", "")
            fault = self._choose(purpose, raw)
            if fault == "429":
                self._record(purpose, fault, 429)
                return web.json_response(
                    {"error": {"message": "rate limited", "type": "rate_limit"}},
                    status=429,
                    headers={"Retry-After": f"{self.retry_after:g}"},
                )
            if fault == "500":
                self._record(purpose, fault, 500)
                return web.json_response({"error": {"message": "upstream failed", "type": "server_error"}}, status=500)
            if fault == "slow":
                self._record(purpose, fault, 0)
                await asyncio.sleep(self.hang)
                return web.Response(status=504)
            if fault == "html":
                self._record(purpose, fault, 200)
                return web.Response(text=HTML_PAGE, content_type="text/html")
            if fault == "not_completion":
                self._record(purpose, fault, 200)
                return web.json_response({"status": "ok", "queued": True})
            if "upstream" not in session:
                session["upstream"] = ClientSession()
            headers = {k: v for k, v in request.headers.items() if k.lower() in ("content-type", "x-edufair-purpose")}
            async with session["upstream"].post(
                f"{self.upstream}/chat/completions", data=raw, headers=headers
            ) as upstream:
                status, body = upstream.status, await upstream.read()
            self._record(purpose, fault, status)
            if status != 200 or not fault:
                return web.Response(body=body, status=status, content_type="application/json")
            if fault == "truncated":
                return web.Response(body=body[: len(body) // 2], content_type="application/json")
            completion = json.loads(body)
            if fault == "no_choices":
                completion["choices"] = []
            else:  # judge_prose, check_prose: a valid completion whose content does not parse
                completion["choices"][0]["message"]["content"] = PROSE[CONTENT_FAULTS[fault]]
            return web.json_response(completion)

        async def close_session(app: web.Application) -> None:
            if "upstream" in session:
                await session["upstream"].close()

        app = web.Application()
        app.router.add_post("/v1/chat/completions", completions)
        app.on_cleanup.append(close_session)
        return app

    def start(self) -> FaultProxy:
        ready = threading.Event()

        def run() -> None:
            self._loop = asyncio.new_event_loop()
            asyncio.set_event_loop(self._loop)
            runner = web.AppRunner(self._app(), access_log=None)
            self._loop.run_until_complete(runner.setup())
            site = web.TCPSite(runner, "127.0.0.1", 0)
            self._loop.run_until_complete(site.start())
            self.port = site._server.sockets[0].getsockname()[1]
            ready.set()
            self._loop.run_forever()
            self._loop.run_until_complete(runner.cleanup())
            self._loop.close()

        self._thread = threading.Thread(target=run, name="fault-proxy", daemon=True)
        self._thread.start()
        ready.wait(10)
        return self

    def stop(self) -> None:
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(10)

    def __enter__(self) -> FaultProxy:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
