"""audits.llm.runtime: with a CallerThreadExecutor, the blocking work of `run_blocking` runs on the thread that waits
in `run` (the thread whose database connection a test's transaction is on); by default it runs on the runtime's own
database thread."""

import asyncio
import threading

import pytest

from audits.llm.runtime import CallerThreadExecutor, LoopRuntime


@pytest.fixture
def runtime():
    made = LoopRuntime(name="caller-thread-test")
    yield made
    made.stop()
    made.blocking.shutdown(wait=True)


def _threads_of_three_blocking_calls(runtime: LoopRuntime) -> set[str]:
    async def three():
        names = await asyncio.gather(*(runtime.run_blocking(lambda: threading.current_thread().name) for _ in range(3)))
        return set(names)

    return runtime.run(three)


def test_by_default_the_blocking_work_runs_on_the_runtimes_database_thread(runtime):
    assert _threads_of_three_blocking_calls(runtime) == {"caller-thread-test-db_0"}


def test_with_a_caller_thread_executor_it_runs_on_the_thread_that_waits(runtime):
    runtime.blocking = CallerThreadExecutor()
    assert _threads_of_three_blocking_calls(runtime) == {threading.current_thread().name}
    # the waiting thread's own submissions run at once, and a failure reaches whoever awaits it
    assert runtime.blocking.submit(lambda: threading.current_thread().name).result() == threading.current_thread().name

    async def failing():
        return await runtime.run_blocking(lambda: 1 / 0)

    with pytest.raises(ZeroDivisionError):
        runtime.run(failing)


def test_work_the_waiting_call_does_not_await_still_runs_on_the_callers_thread(runtime):
    executor = CallerThreadExecutor()
    runtime.blocking = executor
    done = []

    async def submit_later():
        # a write like the limit reporter's: submitted from the loop, not awaited by the waiting call
        asyncio.get_running_loop().run_in_executor(executor, lambda: done.append(threading.current_thread().name))

    runtime.run(submit_later)
    executor.drain()  # at the latest when the executor is replaced
    assert done == [threading.current_thread().name]
