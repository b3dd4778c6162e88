"""Benchmark of labelling under load: simulated annotators against gunicorn and PostgreSQL.

Gunicorn + PostgreSQL on loopback, simulated annotators doing "next item" + "submit" through the API for a fixed time.

(a) closed loop: C clients (default 32) with no think time — the maximum throughput;
(b) open loop: requests started on a fixed schedule (default 100 requests/s) whatever the server does, with
    latency measured from the *scheduled* start, so a slow server cannot hide its queueing (no coordinated
    omission). p50 / p95 / p99 are reported.

Every run creates its own database (``edufair_bench_labelling``, dropped first), migrates it, seeds one
stage with overlap 3, many items and annotators who passed the gate (API tokens), starts gunicorn, runs the
load, stops gunicorn, and checks the data afterwards: no item above its overlap, no annotator twice on an
item. It is a benchmark, not a test: it prints numbers; benchmarks/RESULTS.md records them.

    .venv/bin/python benchmarks/labelling_load.py --mode both --duration 60 --runs 3
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

import aiohttp

ROOT = Path(__file__).resolve().parent.parent
DB_NAME = "edufair_bench_labelling"
PG = "postgres://postgres@127.0.0.1:5432"
LATE_START = 0.010  # an open-loop request that starts this much after its schedule is counted as late


def server_env(port: int) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        {
            "DATABASE_URL": f"{PG}/{DB_NAME}",
            "DATABASE_CONN_MAX_AGE": "600",
            "DEBUG": "0",
            "SECRET_KEY": "benchmark-only-secret-key-not-for-production-0123456789",
            "ALLOWED_HOSTS": "127.0.0.1,localhost",
            "SECURE_SSL_REDIRECT": "0",
            "SECURE_HSTS_SECONDS": "0",
            "SESSION_COOKIE_SECURE": "0",
            "CSRF_COOKIE_SECURE": "0",
            "EDUFAIR_DATA_DIR": str(ROOT / "var" / "bench-labelling"),
            # The closed loop has no think time: a simulated annotator submits far faster than a person, and the
            # benchmark measures the server's capacity, not the per-user throttle.
            "THROTTLE_WRITE_RATE": "off",
            "THROTTLE_EXPENSIVE_READ_RATE": "off",
        }
    )
    return env


def recreate_database() -> None:
    import psycopg

    with psycopg.connect(f"{PG}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{DB_NAME}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{DB_NAME}"')


def seed(items: int, annotators: int, overlap: int) -> tuple[int, list[str]]:
    """Migrate and seed in this process; returns (stage id, API tokens)."""
    os.environ.update(server_env(0))
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "edufair_web.settings")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from django.conf import settings

    # The simulated annotators authenticate with API tokens; their passwords are never checked, so a fast
    # hasher keeps seeding hundreds of them from dominating the run.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    from knox.models import AuthToken

    from annotation.models import Enrollment, Item
    from annotation.services.enrollment import enrollment_create
    from annotation.services.labelling import stage_main_open
    from annotation.services.projects import project_create, question_create, stage_create
    from annotation.services.training import guideline_confirm, guideline_publish
    from edufair_web.accounts.services import user_create_with_role

    project = project_create(name="Labelling load", categories=["A", "B"], subjects=["maths", "physics"])
    question = question_create(
        project=project,
        key="aligned",
        prompt="Does the interaction instantiate its risk category?",
        choices=[{"value": "yes", "label": "Yes", "key": "1"}, {"value": "no", "label": "No", "key": "2"}],
        justification_required_for=["no"],
        positive_values=["yes"],
    )
    stage = stage_create(
        project=project,
        name="Crowd check",
        questions=[question],
        overlap=overlap,
        resolution_policy="majority_reviewer",
    )
    guideline_publish(stage=stage, text="# Guideline\n\nLabel the interaction.")
    Item.objects.bulk_create(
        [
            Item(
                project=project,
                external_id=f"load-{n}",
                payload={"text": f"Interaction {n}: the tutor explains step {n % 7}."},
                subject=("maths", "physics")[n % 2],
                category=("A", "B")[(n // 2) % 2],
            )
            for n in range(items)
        ]
    )
    stage_main_open(stage=stage)
    tokens = []
    for n in range(annotators):
        user = user_create_with_role(username=f"load-{n:03d}", role="annotator", password="load-password-1")
        enrollment = enrollment_create(stage=stage, user=user)
        guideline_confirm(enrollment=enrollment)
        Enrollment.objects.filter(pk=enrollment.pk).update(gate_passed=True, status=Enrollment.Status.PASSED)
        tokens.append(AuthToken.objects.create(user=user)[1])
    from django.db import connections

    connections.close_all()
    return stage.pk, tokens


def start_gunicorn(port: int, workers: int, threads: int, boot_seconds: float = 30) -> subprocess.Popen:
    cmd = [
        str(ROOT / ".venv" / "bin" / "gunicorn"),
        "edufair_web.wsgi:application",
        "--bind",
        f"127.0.0.1:{port}",
        "--workers",
        str(workers),
        "--worker-class",
        "gthread",
        "--threads",
        str(threads),
        "--keep-alive",
        "30",
        "--log-level",
        "warning",
    ]
    proc = subprocess.Popen(cmd, cwd=ROOT, env=server_env(port), start_new_session=True)
    deadline = time.monotonic() + boot_seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"gunicorn exited with {proc.returncode} (is port {port} taken?)")
        try:
            import urllib.request

            urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2)  # noqa: S310 — loopback
            return proc
        except Exception:  # noqa: BLE001 — not up yet
            time.sleep(0.3)
    proc.terminate()
    raise RuntimeError("gunicorn did not come up")


def _process_cpu(entry: Path) -> tuple[str, int, float] | None:
    """(command name, parent pid, user + system CPU seconds) of one /proc entry, or None if it is gone."""
    try:
        head, rest = (entry / "stat").read_text().rsplit(")", 1)
    except OSError:
        return None
    fields = rest.split()
    # Fields 4, 14 and 15 of /proc/pid/stat: the parent's pid, utime and stime (in clock ticks).
    return head.split("(", 1)[1], int(fields[1]), (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cpu_seconds(master_pid: int) -> dict[str, float]:
    """CPU used so far by gunicorn's workers (children of the master), by every PostgreSQL process, and by
    this load generator: where the machine's two cores go."""
    totals = {"gunicorn": 0.0, "postgres": 0.0}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        found = _process_cpu(entry)
        if found is None:
            continue
        name, parent, seconds = found
        if parent == master_pid:
            totals["gunicorn"] += seconds
        elif name == "postgres":
            totals["postgres"] += seconds
    usage = os.times()
    totals["client"] = usage.user + usage.system
    return totals


def stop(proc: subprocess.Popen) -> None:
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)


class Annotator:
    """One simulated annotator: alternates GET next and POST submit with its own token."""

    def __init__(self, token: str, base: str, stage: int):
        self.headers = {"Authorization": f"Token {token}"}
        self.next_url = f"{base}/api/annotation/main/{stage}/next/"
        self.submit_url = f"{base}/api/annotation/main/{stage}/submit/"
        self.item: int | None = None
        self.busy = False

    async def step(self, session: aiohttp.ClientSession) -> tuple[str, int]:
        if self.item is None:
            async with session.get(self.next_url, headers=self.headers) as response:
                body = await response.json() if response.status == 200 else None
                if body:
                    self.item = body["item"]["id"]
                return "next", response.status
        body = {"item": self.item, "answers": {"aligned": {"value": "yes"}}, "seconds": 12.0}
        async with session.post(self.submit_url, json=body, headers=self.headers) as response:
            await response.read()
            self.item = None
            return "submit", response.status


async def safe_step(annotator: Annotator, session: aiohttp.ClientSession) -> tuple[str, int | str]:
    """A step whose transport failure (e.g. a reset connection) is counted as an error, not a crash."""
    try:
        return await annotator.step(session)
    except (TimeoutError, aiohttp.ClientError) as exc:
        annotator.item = None  # ask for the current item again; the server gives the same reservation
        return "transport", type(exc).__name__


async def closed_loop(annotators: list[Annotator], duration: float) -> dict:
    latencies: list[float] = []
    errors: dict[str, int] = {}
    connector = aiohttp.TCPConnector(limit=len(annotators) + 4)
    async with aiohttp.ClientSession(connector=connector) as session:
        deadline = time.perf_counter() + duration

        async def run(annotator: Annotator):
            while time.perf_counter() < deadline:
                started = time.perf_counter()
                kind, status = await safe_step(annotator, session)
                latencies.append(time.perf_counter() - started)
                if status not in (200, 201):
                    errors[f"{kind} {status}"] = errors.get(f"{kind} {status}", 0) + 1

        started = time.perf_counter()
        await asyncio.gather(*(run(a) for a in annotators))
        elapsed = time.perf_counter() - started
    return {"requests": len(latencies), "elapsed": elapsed, "latencies": latencies, "errors": errors}


async def open_loop(annotators: list[Annotator], duration: float, rate: float) -> dict:
    """Start one request every 1/rate s on a fixed schedule, each by an annotator not already waiting."""
    latencies: list[float] = []
    errors: dict[str, int] = {}
    idle = list(annotators)
    late_starts = 0
    connector = aiohttp.TCPConnector(limit=len(annotators) + 4)
    async with aiohttp.ClientSession(connector=connector) as session:
        begin = time.perf_counter()
        tasks = []

        async def one(annotator: Annotator, scheduled: float):
            kind, status = await safe_step(annotator, session)
            latencies.append(time.perf_counter() - scheduled)  # from the scheduled start: no coordinated omission
            if status not in (200, 201):
                errors[f"{kind} {status}"] = errors.get(f"{kind} {status}", 0) + 1
            idle.append(annotator)

        n = 0
        while True:
            scheduled = begin + n / rate
            if scheduled - begin >= duration:
                break
            delay = scheduled - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            while not idle:  # every simulated annotator is waiting: the server is behind
                await asyncio.sleep(0.001)
            if time.perf_counter() - scheduled > LATE_START:
                late_starts += 1
            tasks.append(asyncio.create_task(one(idle.pop(0), scheduled)))
            n += 1
        await asyncio.gather(*tasks)
        elapsed = time.perf_counter() - begin
    return {
        "requests": len(latencies),
        "elapsed": elapsed,
        "latencies": latencies,
        "errors": errors,
        "late_starts": late_starts,
    }


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


def summarise(result: dict) -> dict:
    lat = result["latencies"]
    return {
        "requests": result["requests"],
        "req_per_s": result["requests"] / result["elapsed"],
        "p50_ms": 1000 * percentile(lat, 50),
        "p95_ms": 1000 * percentile(lat, 95),
        "p99_ms": 1000 * percentile(lat, 99),
        "mean_ms": 1000 * statistics.fmean(lat),
        "errors": result["errors"],
        "late_starts": result.get("late_starts"),
    }


def check_integrity(overlap: int) -> dict:
    import psycopg

    with psycopg.connect(f"{PG}/{DB_NAME}") as conn:
        over = conn.execute(
            "SELECT count(*) FROM (SELECT item_id FROM annotation_assignment WHERE phase='main' "
            "GROUP BY stage_id, item_id HAVING count(*) > %s) x",
            (overlap,),
        ).fetchone()[0]
        slots_mismatch = conn.execute(
            "SELECT count(*) FROM annotation_mainitem m WHERE m.slots_taken <> (SELECT count(*) FROM "
            "annotation_assignment a WHERE a.stage_id = m.stage_id AND a.item_id = m.item_id AND a.phase='main')"
        ).fetchone()[0]
        labels = conn.execute("SELECT count(*) FROM annotation_label WHERE phase='main'").fetchone()[0]
        submitted = conn.execute(
            "SELECT count(*) FROM annotation_assignment WHERE phase='main' AND submitted_at IS NOT NULL"
        ).fetchone()[0]
    return {
        "items_over_overlap": over,
        "slot_count_mismatches": slots_mismatch,
        "labels": labels,
        "submitted": submitted,
    }


def run_once(mode: str, args) -> dict:
    recreate_database()
    # Seeding runs in a child process, so each run gets a fresh Django with the benchmark's settings.
    out = subprocess.run(
        [
            sys.executable,
            __file__,
            "--seed-only",
            "--items",
            str(args.items),
            "--annotators",
            str(args.annotators),
            "--overlap",
            str(args.overlap),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    stage, *tokens = out.stdout.split()
    proc = start_gunicorn(args.port, args.workers, args.threads)
    try:
        base = f"http://127.0.0.1:{args.port}"
        clients = args.clients if mode == "closed" else args.annotators
        annotators = [Annotator(token, base, int(stage)) for token in tokens[:clients]]
        asyncio.run(closed_loop(annotators, 3))  # warm-up: connections, imports, caches
        cpu_before = cpu_seconds(proc.pid)
        if mode == "closed":
            result = asyncio.run(closed_loop(annotators, args.duration))
        else:
            result = asyncio.run(open_loop(annotators, args.duration, args.rate))
        cpu_after = cpu_seconds(proc.pid)
    finally:
        stop(proc)
    summary = summarise(result)
    requests = max(result["requests"], 1)
    summary["cpu_ms_per_request"] = {
        name: 1000 * (cpu_after[name] - cpu_before[name]) / requests for name in ("gunicorn", "postgres", "client")
    }
    summary["integrity"] = check_integrity(args.overlap)
    return summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=["closed", "open", "both"], default="both")
    parser.add_argument("--duration", type=float, default=60)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--rate", type=float, default=100)
    parser.add_argument("--annotators", type=int, default=128, help="Seeded annotators (the open loop uses all).")
    parser.add_argument("--items", type=int, default=20000)
    parser.add_argument("--overlap", type=int, default=3)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--port", type=int, default=0, help="0: a free port chosen at start")
    parser.add_argument("--seed-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if not args.port:
        import socket

        with socket.socket() as probe:  # a port nobody else on this shared machine is using
            probe.bind(("127.0.0.1", 0))
            args.port = probe.getsockname()[1]
    if args.seed_only:
        stage, tokens = seed(args.items, args.annotators, args.overlap)
        print(stage, *tokens)
        return

    load = os.getloadavg()
    print(f"machine: {platform.node()} nproc={os.cpu_count()} python={platform.python_version()} load={load}")
    print(f"gunicorn: {args.workers} workers × {args.threads} threads (gthread); PostgreSQL at 127.0.0.1:5432")
    modes = ["closed", "open"] if args.mode == "both" else [args.mode]
    for mode in modes:
        runs = []
        for n in range(args.runs):
            summary = run_once(mode, args)
            runs.append(summary)
            print(
                f"{mode} run {n + 1}: {summary['req_per_s']:.1f} req/s, p50 {summary['p50_ms']:.1f} ms, "
                f"p95 {summary['p95_ms']:.1f} ms, p99 {summary['p99_ms']:.1f} ms, errors {summary['errors']}, "
                f"late starts {summary['late_starts']}, integrity {summary['integrity']}, "
                "CPU ms/request "
                + ", ".join(f"{name} {ms:.1f}" for name, ms in summary["cpu_ms_per_request"].items())
                + ", "
                f"load {os.getloadavg()[0]:.2f}",
                flush=True,
            )
        median = {
            key: statistics.median(run[key] for run in runs) for key in ("req_per_s", "p50_ms", "p95_ms", "p99_ms")
        }
        print(f"{mode} median of {len(runs)}: " + ", ".join(f"{k} {v:.1f}" for k, v in median.items()), flush=True)


if __name__ == "__main__":
    main()
