"""One event loop per process, on a thread of its own, that every model call of the process runs on.

Celery runs tasks on threads; if each task ran its own `asyncio.run`, each would have its own
limiters and HTTP pools and an endpoint's `max_concurrency` would multiply by the number of task
threads. Instead, tasks submit their coroutine here and wait: the process has one client, one
limiter (in-flight limit and rate budgets) per endpoint and one connection pool per endpoint.
Blocking work (the database) runs on a single helper thread (`run_blocking`), so the loop never waits
on it and the database sees one writer per process. Tests that roll back put a `CallerThreadExecutor` in its
place (conftest.py): the work then runs on the thread waiting in `run`, with that thread's connection.
"""

from __future__ import annotations

import asyncio
import atexit
import queue
import threading
from collections.abc import Callable, Coroutine
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")


class CallerThreadExecutor(Executor):
    """Blocking work done on the thread that created this executor, while it waits in `LoopRuntime.run` (or at
    once, when that thread submits it): the database work then uses that thread's connection and sees its open
    transaction. For tests that roll back; a process's workers keep the database thread."""

    def __init__(self) -> None:
        self._owner = threading.get_ident()
        self._work: queue.SimpleQueue = queue.SimpleQueue()

    def submit(self, fn, /, *args, **kwargs) -> Future:
        future: Future = Future()
        if threading.get_ident() == self._owner:
            _call(future, fn, args, kwargs)
        else:
            self._work.put((future, fn, args, kwargs))
        return future

    def serve_until(self, done: Future) -> None:
        """Do the work submitted from other threads (the loop's) until `done` is done."""
        done.add_done_callback(lambda _: self._work.put(None))
        while not done.done() or not self._work.empty():
            item = self._work.get()
            if item is not None:
                _call(*item)

    def drain(self) -> None:
        """Do what is left (a write submitted after the last wait), before the executor is replaced."""
        while not self._work.empty():
            item = self._work.get()
            if item is not None:
                _call(*item)


def _call(future: Future, fn: Callable, args: tuple, kwargs: dict) -> None:
    if not future.set_running_or_notify_cancel():
        return
    try:
        future.set_result(fn(*args, **kwargs))
    except BaseException as exc:  # handed to the waiter, as a thread pool does
        future.set_exception(exc)


class LoopRuntime:
    def __init__(self, name: str = "edufair-engine") -> None:
        self._name = name
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self.blocking: Executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"{name}-db")
        self.state: dict[str, Any] = {}  # objects that live on the loop (the client)

    def _ensure_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None or not self._thread or not self._thread.is_alive():
                ready = threading.Event()

                def run() -> None:
                    self._loop = asyncio.new_event_loop()
                    asyncio.set_event_loop(self._loop)
                    ready.set()
                    self._loop.run_forever()

                self._thread = threading.Thread(target=run, name=self._name, daemon=True)
                self._thread.start()
                ready.wait()
            return self._loop

    def run(self, coroutine_factory: Callable[[], Coroutine[Any, Any, T]]) -> T:
        """Run a coroutine on the process loop and wait for its result (from any thread but the loop's)."""
        loop = self._ensure_loop()
        future = asyncio.run_coroutine_threadsafe(coroutine_factory(), loop)
        if isinstance(self.blocking, CallerThreadExecutor):
            self.blocking.serve_until(future)
        return future.result()

    async def run_blocking(self, function: Callable[..., T], *args: Any) -> T:
        return await asyncio.get_running_loop().run_in_executor(self.blocking, function, *args)

    def stop(self) -> None:
        loop = self._loop
        if loop is not None and loop.is_running():
            loop.call_soon_threadsafe(loop.stop)


_runtime: LoopRuntime | None = None
_runtime_lock = threading.Lock()


def process_runtime() -> LoopRuntime:
    global _runtime
    with _runtime_lock:
        if _runtime is None:
            _runtime = LoopRuntime()
            atexit.register(_runtime.stop)
        return _runtime
