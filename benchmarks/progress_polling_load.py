"""Benchmark of researchers polling audit progress while an audit runs and annotators label.

Gunicorn + PostgreSQL + Redis on loopback, a real Celery worker running a simulation audit, simulated annotators doing
"next item" + "submit" at a fixed open-loop rate (the labelling benchmark's client, imported from labelling_load.py),
and simulated researchers each polling `GET /api/audits/{id}/progress/` on a fixed schedule (every `--poll-interval` s,
as the audit page's htmx polling does). Latency is measured from the scheduled start (no coordinated omission). Reports
p50/p95/p99 and errors for polling and for labelling, and how far the audit got while it was being polled. A benchmark,
not a test; benchmarks/RESULTS.md records its numbers.

    .venv/bin/python benchmarks/progress_polling_load.py --duration 30 --researchers 20
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import aiohttp

sys.path.insert(0, str(Path(__file__).resolve().parent))
import labelling_load as labelling  # noqa: E402  (the labelling benchmark's server, seed and client)

ROOT = labelling.ROOT
# A database of its own, so this benchmark and the labelling one can run on the same machine.
labelling.DB_NAME = "edufair_bench_polling"
BROKER = os.environ.get("BENCH_BROKER_URL", "redis://127.0.0.1:6379/12")
QUEUE = "bench-progress-polling"


def env() -> dict[str, str]:
    values = labelling.server_env(0)
    values.update({"CELERY_BROKER_URL": BROKER, "CELERY_QUEUE": QUEUE, "AUDITS_TASK_QUEUE": QUEUE})
    return values


def seed_audit(questions: int) -> dict:
    """In the seed process (after labelling.seed set Django up): a researcher token and a launched audit."""
    from django.conf import settings
    from knox.models import AuthToken

    from audits.models import Dialogue
    from audits.services.audit_lifecycle import audit_create, audit_launch
    from audits.tests.engine_factories import PLANTED_BIAS, explicit_conditions, make_questions, simulation_endpoint
    from edufair_web.accounts.services import user_create_with_role

    settings.AUDITS_TASK_QUEUE = QUEUE
    researchers = [
        AuthToken.objects.create(
            user=user_create_with_role(username=f"poller-{n:03d}", role="researcher", password="poll-password-1")
        )[1]
        for n in range(50)
    ]
    audit = audit_create(
        name="polled audit",
        tutors=[simulation_endpoint("fair tutor"), simulation_endpoint("biased tutor", bias=PLANTED_BIAS)],
        student_endpoint=simulation_endpoint("student"),
        judge_endpoint=simulation_endpoint("judge"),
        questions=make_questions(questions, prefix="poll"),
        conditions=explicit_conditions(("first_language", "gender")),
        batch_size=10,
    )
    audit_launch(audit=audit)
    return {"audit": audit.pk, "dialogues": Dialogue.objects.filter(audit=audit).count(), "researchers": researchers}


class Researcher:
    def __init__(self, token: str, base: str, audit: int):
        self.headers = {"Authorization": f"Token {token}"}
        self.url = f"{base}/api/audits/{audit}/progress/"
        self.last: dict = {}

    async def poll(self, session: aiohttp.ClientSession) -> int | str:
        try:
            async with session.get(self.url, headers=self.headers) as response:
                if response.status == 200:
                    self.last = await response.json()
                else:
                    await response.read()
                return response.status
        except (TimeoutError, aiohttp.ClientError) as exc:
            return type(exc).__name__


async def polling(researchers: list[Researcher], duration: float, interval: float) -> dict:
    latencies: list[float] = []
    errors: dict[str, int] = {}
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=len(researchers) + 4)) as session:
        begin = time.perf_counter()

        async def run(researcher: Researcher, offset: float):
            n = 0
            while True:
                scheduled = begin + offset + n * interval
                if scheduled - begin >= duration:
                    return
                await asyncio.sleep(max(0.0, scheduled - time.perf_counter()))
                status = await researcher.poll(session)
                latencies.append(time.perf_counter() - scheduled)
                if status != 200:
                    errors[str(status)] = errors.get(str(status), 0) + 1
                n += 1

        # Spread the researchers over the interval, as real people opening pages at different times.
        await asyncio.gather(*(run(r, interval * i / len(researchers)) for i, r in enumerate(researchers)))
        elapsed = time.perf_counter() - begin
    return {"requests": len(latencies), "elapsed": elapsed, "latencies": latencies, "errors": errors}


def start_worker() -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "edufair_web", "worker", "--pool=threads", "-c2", "-Q", QUEUE]
        + ["-n", f"{QUEUE}@%h", "--without-gossip", "--without-mingle", "-l", "WARNING"],
        cwd=ROOT,
        env=env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


async def together(annotators, researchers, args) -> tuple[dict, dict]:
    return await asyncio.gather(
        labelling.open_loop(annotators, args.duration, args.rate),
        polling(researchers, args.duration, args.poll_interval),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=30)
    parser.add_argument("--researchers", type=int, default=20)
    parser.add_argument("--poll-interval", type=float, default=1.0)
    parser.add_argument("--rate", type=float, default=100, help="Labelling requests per second (open loop).")
    parser.add_argument("--annotators", type=int, default=128)
    parser.add_argument("--items", type=int, default=20000)
    parser.add_argument("--questions", type=int, default=400, help="Audit size: questions × 2 tutors × 5 conditions.")
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--seed-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.seed_only:
        os.environ.update(env())
        stage, tokens = labelling.seed(args.items, args.annotators, 3)
        print(json.dumps({"stage": stage, "tokens": tokens, **seed_audit(args.questions)}))
        return

    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    print(
        f"machine: {platform.node()} nproc={os.cpu_count()} python={platform.python_version()} load={os.getloadavg()}"
    )
    labelling.recreate_database()
    subprocess.run(["redis-cli", "-u", BROKER, "del", QUEUE], capture_output=True)
    seeded = json.loads(
        subprocess.run(
            [sys.executable, __file__, "--seed-only", "--items", str(args.items), "--annotators", str(args.annotators)]
            + ["--questions", str(args.questions)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, **env()},
        ).stdout.splitlines()[-1]
    )
    os.environ.update(env())
    server = labelling.start_gunicorn(port, args.workers, args.threads)
    worker = start_worker()
    try:
        base = f"http://127.0.0.1:{port}"
        annotators = [labelling.Annotator(t, base, seeded["stage"]) for t in seeded["tokens"][: args.annotators]]
        researchers = [Researcher(t, base, seeded["audit"]) for t in seeded["researchers"][: args.researchers]]
        asyncio.run(polling(researchers, 2, 0.5))  # warm-up
        labelled, polled = asyncio.run(together(annotators, researchers, args))
    finally:
        labelling.stop(server)
        labelling.stop(worker)
    last = max((r.last for r in researchers), key=lambda p: p.get("done", 0), default={})
    print(
        f"gunicorn {args.workers}×{args.threads}, 1 Celery worker (2 threads) running the audit "
        f"({seeded['dialogues']} dialogues); {args.researchers} researchers polling every {args.poll_interval} s; "
        f"labelling open loop at {args.rate} req/s for {args.duration} s"
    )
    for name, result in (("progress polling", polled), ("labelling", labelled)):
        summary = labelling.summarise(result)
        print(
            f"{name}: {summary['requests']} requests, {summary['req_per_s']:.1f} req/s, "
            f"p50 {summary['p50_ms']:.1f} ms, "
            f"p95 {summary['p95_ms']:.1f} ms, p99 {summary['p99_ms']:.1f} ms, errors {result['errors'] or 0}"
        )
    print(f"audit at the last poll: {last.get('status')} {last.get('done')}/{last.get('total')} dialogues done")
    print(f"labels integrity: {labelling.check_integrity(3)}")


if __name__ == "__main__":
    main()
