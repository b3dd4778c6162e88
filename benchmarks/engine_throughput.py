"""Benchmark of engine throughput: model calls per second of a real audit on a real worker.

It is measured against the ideal and against a plain asyncio loop over `AsyncOpenAI` with the same semaphore.

    DEBUG=1 .venv/bin/python benchmarks/engine_throughput.py [--dialogues 500] [--concurrency 64] [--delay 0.2]

What it does:
1. Starts the local OpenAI-protocol server (`audits/tests/openai_server.py`) in a separate process; it
   answers every request after a fixed delay with valid tutor/student/check/judge content (each student
   persona speaks slightly differently, so no two dialogues share a request and every call is real).
2. Uses a fresh embedded database in a temporary directory (or DATABASE_URL / CELERY_BROKER_URL if set),
   creates an audit of `--dialogues` dialogues over the real `openai` provider with `max_concurrency` =
   `--concurrency` ÷ `--workers` per process, starts `--workers` Celery worker processes (default one;
   run as in production, with DEBUG off), launches the audit and waits for it. Both loops use the same
   HTTP transport (LLM_HTTP_TRANSPORT).
3. Reports achieved calls/s (ledger rows ÷ time from the first claim to the last finished dialogue),
   the ideal (concurrency ÷ delay), and the server's mean number of requests in flight.
4. Sends the same number of requests (the same messages, taken from the ledger) through a minimal
   plain loop: `AsyncOpenAI(max_retries=0)` + `asyncio.Semaphore(concurrency)` + `gather` — the client
   library's ceiling on this machine — and reports its calls/s.

Nothing here is a test; the numbers go to benchmarks/RESULTS.md by hand, with this command.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def start_server(delay: float) -> tuple[subprocess.Popen, int]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "audits.tests.openai_server", "--delay", str(delay), "--distinct-students"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    line = proc.stdout.readline()
    if not line.startswith("listening on"):
        raise RuntimeError(f"the model server did not start: {line!r}")
    return proc, int(line.split()[-1])


def server_stats(port: int) -> dict:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/stats") as response:
        return json.loads(response.read())


def server_reset(port: int) -> None:
    request = urllib.request.Request(f"http://127.0.0.1:{port}/reset", method="POST", data=b"")
    urllib.request.urlopen(request).read()


def plain_loop(port: int, requests: list[tuple[str, list[dict]]], concurrency: int) -> float:
    """Calls/s of the bare client: the same requests, one semaphore, no ledger, no database, on the same
    HTTP transport as the engine (LLM_HTTP_TRANSPORT)."""
    import httpx2
    import openai

    from audits.llm.openai_compat import http_transport

    client_class = openai.DefaultAioHttpClient if http_transport() == "aiohttp" else openai.DefaultAsyncHttpxClient

    async def run() -> float:
        client = openai.AsyncOpenAI(
            api_key="not-needed",
            base_url=f"http://127.0.0.1:{port}/v1",
            max_retries=0,
            http_client=client_class(
                limits=httpx2.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
            ),
        )
        semaphore = asyncio.Semaphore(concurrency)

        async def one(purpose: str, messages: list[dict]) -> None:
            async with semaphore:
                await client.chat.completions.create(
                    model="bench", messages=messages, temperature=0, extra_headers={"X-EduFair-Purpose": purpose}
                )

        started = time.perf_counter()
        await asyncio.gather(*(one(p, m) for p, m in requests))
        elapsed = time.perf_counter() - started
        await client.close()
        return len(requests) / elapsed

    return asyncio.run(run())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dialogues", type=int, default=500)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--delay", type=float, default=0.2)
    parser.add_argument("--batch-size", type=int, default=100)
    parser.add_argument("--worker-threads", type=int, default=2)
    parser.add_argument(
        "--workers", type=int, default=1, help="worker processes; each gets concurrency / workers in flight"
    )
    args = parser.parse_args()

    data_dir = tempfile.mkdtemp(prefix="edufair-bench-")
    os.environ.setdefault("DEBUG", "1")
    os.environ["EDUFAIR_DATA_DIR"] = data_dir
    os.environ["CELERY_QUEUE"] = f"bench-{os.getpid()}"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "edufair_web.settings")
    os.environ["LOG_LEVEL"] = "WARNING"
    os.environ.setdefault("EDUFAIR_ENDPOINT_ALLOWED_HOSTS", "127.0.0.1")  # the local model server
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    call_command("migrate", verbosity=0)
    from audits.llm.openai_compat import http_transport
    from audits.models import Audit, Dialogue, LLMCall, ModelEndpoint
    from audits.services.audit_lifecycle import audit_create, audit_launch
    from audits.tests.engine_factories import explicit_conditions, make_questions

    server, port = start_server(args.delay)
    workers: list[subprocess.Popen] = []
    try:
        base_url = f"http://127.0.0.1:{port}/v1"
        endpoint = ModelEndpoint.objects.create(
            name="bench", provider="openai", model="bench", base_url=base_url,
            max_concurrency=max(1, args.concurrency // args.workers),
            timeout=30,
        )  # fmt: skip
        conditions = explicit_conditions(("first_language", "immigration"))  # control + 4 levels = 5
        questions = make_questions(-(-args.dialogues // len(conditions)), prefix="bench")
        audit = audit_create(
            name="throughput",
            tutors=[endpoint],
            student_endpoint=endpoint,
            judge_endpoint=endpoint,
            questions=questions,
            conditions=conditions,
            batch_size=args.batch_size,
        )
        for n in range(args.workers):
            command = [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "edufair_web",
                "worker",
                "--pool=threads",
                f"-c{args.worker_threads}",
            ]
            command += ["-Q", os.environ["CELERY_QUEUE"], "-n", f"bench{n}@%h", "--without-gossip", "--without-mingle"]
            command += ["-l", "WARNING"]
            # Workers run as in production: DEBUG off (no query log on every database call).
            worker_env = {**os.environ, "PYTHONUNBUFFERED": "1", "DEBUG": "0", "SECRET_KEY": "benchmark-only-" * 4}
            workers.append(subprocess.Popen(command, cwd=ROOT, env=worker_env))
        time.sleep(3)  # let the worker connect before the clock matters (the clock starts at the first claim)
        server_reset(port)
        audit_launch(audit=audit)
        total = Dialogue.objects.filter(audit=audit).count()
        while Audit.objects.get(pk=audit.pk).status != Audit.Status.FINISHED:
            time.sleep(0.5)
        stats = server_stats(port)
        dialogues = Dialogue.objects.filter(audit=audit)
        first = min(dialogues.values_list("started_at", flat=True))
        last = max(dialogues.values_list("finished_at", flat=True))
        elapsed = (last - first).total_seconds()
        calls = LLMCall.objects.count()
        engine_rate = calls / elapsed
        ideal = args.concurrency / args.delay
        requests = [(c.purpose, c.request["messages"]) for c in LLMCall.objects.order_by("pk")]
        failed = dialogues.exclude(status="done").count()

        server_reset(port)
        plain_rate = plain_loop(port, requests, args.concurrency)
        plain_stats = server_stats(port)

        result = {
            "database": connection.vendor,
            "dialogues": total,
            "failed_dialogues": failed,
            "calls": calls,
            "server_requests": stats["requests"],
            "engine_seconds": round(elapsed, 2),
            "engine_calls_per_s": round(engine_rate, 1),
            "engine_mean_in_flight": round(stats["mean_in_flight"], 1),
            "ideal_calls_per_s": round(ideal, 1),
            "plain_loop_calls_per_s": round(plain_rate, 1),
            "plain_mean_in_flight": round(plain_stats["mean_in_flight"], 1),
            "engine_vs_plain": round(engine_rate / plain_rate, 3),
            "engine_vs_ideal": round(engine_rate / ideal, 3),
            "plain_vs_ideal": round(plain_rate / ideal, 3),
            "cpu_count": os.cpu_count(),
            "worker_processes": args.workers,
            "in_flight_per_worker": max(1, args.concurrency // args.workers),
            "http_transport": http_transport(),
        }
        print(json.dumps(result, indent=2))
    finally:
        for worker in workers:
            worker.terminate()
        for worker in workers:
            worker.wait(30)
        server.terminate()
        server.wait(10)


if __name__ == "__main__":
    main()
