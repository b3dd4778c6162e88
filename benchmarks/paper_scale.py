"""Benchmark of a ladder of simulation audits on the production-like stack, its pages measured while people watch.

    .venv/bin/python benchmarks/paper_scale.py [--sizes 2000 10000 40000] [--json out.json]

The stack, DEBUG=0 throughout: PostgreSQL on 127.0.0.1:5432 (its own database `paper_scale_bench`, created at the
start, dropped at the end unless --keep-database), Redis on 127.0.0.1:6379 as the broker (database 10, or
BENCH_BROKER_URL; the cache one up), 2 Celery worker processes (threads, 8 each: docker-compose's worker) and gunicorn
(gthread 4 × 4, keep-alive 30 s: the README's web service), throttles off. A warm-up audit runs first, unmeasured.

Each rung is an audit of a fair and a planted-bias simulated tutor (--tutors adds fair ones) × the design's conditions
(explicit: control + the explicit levels of gender, immigration, first language and SES = 10; paper: also one name
per name cell and the opposite cells = 26) × synthetic questions over three domains, enough to reach the size.
Endpoints are the audit's own (no ledger reuse). It is launched through `audit_launch`, run by the workers, analysed
by them on finish (ANALYSIS_ON_FINISH). Meanwhile a researcher on a connection of its own polls the live panel 2 s
after each answer (htmx's `every 2s`) and reloads the run page every fifth poll. Recorded: launch → the audit's
`finished_at`, dialogues/s, the engine's span (first start → last finish), the growth of `pg_database_size` and of
the audit tables' `pg_total_relation_size` per dialogue, the analysis (the worker's `AnalysisResult.seconds`, and
finished → ready); then over one keep-alive connection (one gunicorn worker) the run page, the results page, the
first cell it links to, the first pairs page that cell links to, the HTML report and each of EXPORTS: a first view,
then --repeat timed ones (p50 / p95, nearest rank), with the serving worker's RSS growth for exports (/proc, 20 ms).

The first size runs three more times, nobody watching twice and then watched again (watched, unwatched, unwatched,
watched: --unwatched-size), and the header gives the watched / unwatched throughput ratio; after the largest rung the
first audit's pages are measured again and a new audit of the first size is run and measured (a small audit in a big
database). Prints the CPU model, commit and load, progress on stderr and a Markdown table for benchmarks/RESULTS.md.
Not a test.
"""

from __future__ import annotations

import argparse
import html
import json
import math
import os
import platform
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import requests

sys.path.insert(0, str(Path(__file__).resolve().parent))
import labelling_load as labelling  # noqa: E402  (gunicorn, its environment, stopping, percentiles)
from page_latency import DIMENSIONS, DOMAINS, cpu_model  # noqa: E402

ROOT = labelling.ROOT
labelling.DB_NAME = "paper_scale_bench"  # a database of its own (labelling.server_env and recreate_database use it)
BROKER = os.environ.get("BENCH_BROKER_URL", "redis://127.0.0.1:6379/10")
QUEUE = "bench-paper-scale"
DESIGNS = {"explicit": {}, "paper": {"implicit": True, "names_per_cell": 1, "opposite": True}}
POLL_SECONDS = 2.0  # the live panel's hx-trigger="every 2s" (templates/audits/runs/_progress.html)
RUN_PAGE_EVERY = 5  # the researcher reloads the whole run page every fifth poll
# The exports measured: (label, query). A format the code does not serve yet is reported as its status (e.g. 404).
EXPORTS = (
    ("CSV contrasts", {"format": "csv", "table": "contrasts"}),
    ("CSV raw scores", {"format": "csv", "table": "raw_scores"}),
    ("JSON", {"format": "json"}),
    ("Parquet raw scores", {"format": "parquet", "table": "raw_scores"}),
)
AUDIT_TABLE_PREFIX = "audits_"


def env() -> dict[str, str]:
    values = labelling.server_env(0)
    values.update(
        {
            "CELERY_BROKER_URL": BROKER,
            "CELERY_QUEUE": QUEUE,
            "AUDITS_TASK_QUEUE": QUEUE,
            "ANALYSIS_ON_FINISH": "1",
            "LOG_LEVEL": "WARNING",
            # DEBUG=0 serves static files from the manifest, as in production (collected in django_setup).
            "STATIC_ROOT": str(ROOT / "var" / "bench-paper-scale-static"),
        }
    )
    return values


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def django_setup() -> None:
    os.environ.update(env())
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "edufair_web.settings")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    call_command("collectstatic", interactive=False, verbosity=0)


def start_workers(count: int, threads: int) -> list[subprocess.Popen]:
    """The Celery workers, their output to var/bench-paper-scale-workers.log."""
    output = open(ROOT / "var" / "bench-paper-scale-workers.log", "ab")  # noqa: SIM115 (the workers' lifetime)
    return [
        subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "edufair_web", "worker", "--pool=threads", f"-c{threads}"]
            + ["-Q", QUEUE, "-n", f"paperscale{n}@%h", "--without-gossip", "--without-mingle", "-l", "WARNING"],
            cwd=ROOT,
            env=env(),
            stdout=output,
            stderr=output,
            start_new_session=True,
        )
        for n in range(count)
    ]


def worker_pids(master: int) -> list[int]:
    """gunicorn's workers: the children of its master."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == master:
                    found.append(int(entry.name))
            except (OSError, IndexError, ValueError):
                continue
    return found


def rss_bytes(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


class RssPeak(threading.Thread):
    """The largest RSS growth of any of `pids` over their RSS at the start, sampled every 20 ms until stopped."""

    def __init__(self, pids: list[int]):
        super().__init__(daemon=True)
        self.base = {pid: rss_bytes(pid) for pid in pids}
        self.peak = dict(self.base)
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.wait(0.02):
            for pid in self.base:
                self.peak[pid] = max(self.peak[pid], rss_bytes(pid))

    def stop(self) -> tuple[int, int]:
        """(peak growth, growth kept after the request) of the worker that grew most."""
        self.done.set()
        self.join()
        pid = max(self.base, key=lambda p: self.peak[p] - self.base[p])
        return self.peak[pid] - self.base[pid], rss_bytes(pid) - self.base[pid]


def database_bytes() -> tuple[int, int]:
    """(pg_database_size, the audit tables' pg_total_relation_size summed)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_database_size(current_database())")
        database = cursor.fetchone()[0]
        cursor.execute(
            "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = 'public' AND c.relkind = 'r' AND c.relname LIKE %s",
            [AUDIT_TABLE_PREFIX + "%"],
        )
        tables = int(cursor.fetchone()[0])
    return database, tables


def researcher_cookie() -> dict[str, str]:
    """A researcher's session (Django's test client logs in without a request), as the browser's cookies."""
    from django.test import Client

    from edufair_web.accounts.services import user_create_with_role

    client = Client()
    client.force_login(user_create_with_role(username="paper-scale", role="researcher", password="paper-scale-pw-1"))
    return {name: morsel.value for name, morsel in client.cookies.items()}


def build_audit(size: int, tag: str, args) -> tuple:
    """A draft audit of about `size` dialogues (see the module docstring), with endpoints of its own."""
    from audits.conditions import ConditionChoice, build_conditions, default_levels, default_names
    from audits.services.audit_lifecycle import audit_create, condition_values
    from audits.tests.engine_factories import PLANTED_BIAS, make_questions, simulation_endpoint

    conditions = build_conditions(
        ConditionChoice(explicit_dimensions=DIMENSIONS, **DESIGNS[args.design]), default_levels(), default_names()
    )
    distinct = len({condition_values(spec)["key"] for spec in conditions})
    questions = math.ceil(size / (args.tutors * distinct))
    per_domain = [questions // len(DOMAINS) + (i < questions % len(DOMAINS)) for i in range(len(DOMAINS))]
    chosen = [
        q for domain, n in zip(DOMAINS, per_domain, strict=True) for q in make_questions(n, domain=domain, prefix="ps")
    ]
    tutors = [
        simulation_endpoint(f"fair tutor {tag}"),
        simulation_endpoint(f"biased tutor {tag}", bias=PLANTED_BIAS),
        *(simulation_endpoint(f"tutor {n} {tag}", seed=n) for n in range(3, args.tutors + 1)),
    ][: args.tutors]
    audit = audit_create(
        name=f"paper scale {tag}",
        tutors=tutors,
        student_endpoint=simulation_endpoint(f"student {tag}"),
        judge_endpoint=simulation_endpoint(f"judge {tag}"),
        questions=chosen,
        conditions=conditions,
        batch_size=args.batch_size,
    )
    return audit, {"tutors": len(tutors), "conditions": distinct, "questions": questions}


class Researcher(threading.Thread):
    """Polls the live panel 2 s after each answer (htmx's `every 2s` on a swapped element) and reloads the run page
    every fifth poll, on a connection of its own, until stopped."""

    def __init__(self, base: str, cookies: dict, audit: int):
        super().__init__(daemon=True)
        self.session = requests.Session()
        self.session.cookies.update(cookies)
        self.urls = {"run page": f"{base}/audits/runs/{audit}/", "live panel": f"{base}/audits/runs/{audit}/progress/"}
        self.latencies: dict[str, list[float]] = {name: [] for name in self.urls}
        self.errors: dict[str, int] = {}
        self.done = threading.Event()

    def run(self) -> None:
        n = 0
        while not self.done.is_set():
            name = "run page" if n % RUN_PAGE_EVERY == 0 else "live panel"
            headers = {"HX-Request": "true"} if name == "live panel" else {}
            started = time.perf_counter()
            try:
                response = self.session.get(self.urls[name], headers=headers, timeout=300)
                status = response.status_code
            except requests.RequestException as exc:
                status = type(exc).__name__
            self.latencies[name].append(time.perf_counter() - started)
            if status != 200:
                self.errors[f"{name} {status}"] = self.errors.get(f"{name} {status}", 0) + 1
            n += 1
            self.done.wait(POLL_SECONDS)

    def stop(self) -> dict:
        self.done.set()
        self.join()
        return {name: summary(values) for name, values in self.latencies.items()} | {"errors": self.errors}


def summary(seconds: list[float]) -> dict:
    if not seconds:
        return {"n": 0}
    return {
        "n": len(seconds),
        "p50_ms": round(1000 * labelling.percentile(seconds, 50), 1),
        "p95_ms": round(1000 * labelling.percentile(seconds, 95), 1),
        "max_ms": round(1000 * max(seconds), 1),
    }


class Browser:
    """One researcher on one keep-alive connection (so one gunicorn worker: "second request" means that worker's)."""

    def __init__(self, base: str, cookies: dict, master: int):
        self.base = base
        self.master = master
        self.session = requests.Session()
        self.session.cookies.update(cookies)

    def get(self, path: str, params: dict | None = None) -> tuple[float, requests.Response]:
        started = time.perf_counter()
        response = self.session.get(self.base + path, params=params, timeout=600)
        return time.perf_counter() - started, response

    def page(self, path: str, repeat: int) -> tuple[dict, str]:
        """The first view, then `repeat` timed views; returns their summary and the page's HTML."""
        first, response = self.get(path)
        times = []
        for _ in range(repeat):
            seconds, response = self.get(path)
            times.append(seconds)
        result = {"first_ms": round(1000 * first, 1), "status": response.status_code, "bytes": len(response.content)}
        return result | summary(times), response.text

    def export(self, path: str, params: dict, repeat: int) -> dict:
        times, peaks, kept = [], [], []
        status, size = None, 0
        for _ in range(1 + repeat):  # the first (the analysis read into this worker) is timed too, reported apart
            sampler = RssPeak(worker_pids(self.master))
            sampler.start()
            seconds, response = self.get(path, params)
            peak, retained = sampler.stop()
            times.append(seconds)
            peaks.append(peak)
            kept.append(retained)
            status, size = response.status_code, len(response.content)
            if status != 200:
                break
        return {
            "status": status,
            "bytes": size,
            "first_ms": round(1000 * times[0], 1),
            **summary(times[1:]),
            "rss_peak_growth_mib": round(max(peaks) / 2**20, 1),
            "rss_kept_growth_mib": round(sum(kept) / 2**20, 1),
        }


def first_link(page: str, kind: str) -> str | None:
    found = re.search(rf'href="(/audits/results/\d+/{kind}/\?[^"#]+)', page)
    return html.unescape(found.group(1)) if found else None


def measure_pages(browser: Browser, audit: int, repeat: int) -> dict:
    pages: dict = {}
    pages["run page"], _ = browser.page(f"/audits/runs/{audit}/", repeat)
    pages["results"], results_html = browser.page(f"/audits/results/{audit}/", repeat)
    cell = first_link(results_html, "cell")
    pairs = None
    if cell:
        pages["cell"], cell_html = browser.page(cell, repeat)
        pairs = first_link(cell_html, "pairs")
    if pairs:
        pages["pairs"], _ = browser.page(pairs, repeat)
    pages["report"], _ = browser.page(f"/audits/results/{audit}/report/", repeat)
    for label, params in EXPORTS:
        pages[label] = browser.export(f"/audits/results/{audit}/export/", params, repeat)
    pages["links"] = {"cell": cell, "pairs": pairs}
    return pages


def wait_for(what: str, check, timeout: float, every: float = 0.5):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(every)
    raise TimeoutError(f"{what}: not after {timeout:.0f} s")


def run_rung(size: int, tag: str, args, stack: dict, *, watched: bool, pages: bool) -> dict:
    from django.db import transaction
    from django.db.models import Max, Min

    from audits.fairness import AnalysisParameters
    from audits.models import AnalysisResult, Audit, Dialogue
    from audits.services.analysis import parameters_hash
    from audits.services.audit_lifecycle import audit_launch

    audit, shape = build_audit(size, tag, args)
    bytes_before = database_bytes()
    load_before = os.getloadavg()[0]
    watcher = Researcher(stack["base"], stack["cookies"], audit.pk) if watched else None
    launched = time.time()
    with transaction.atomic():
        audit_launch(audit=audit)
    if watcher:
        watcher.start()
    total = Dialogue.objects.filter(audit=audit).count()
    log(f"{tag}: {total:,} dialogues launched ({'watched' if watched else 'nobody watching'})")

    def finished():
        status = Audit.objects.filter(pk=audit.pk).values_list("status", flat=True).first()
        if status != Audit.Status.RUNNING:
            return status
        if time.monotonic() - finished.last > 60:
            finished.last = time.monotonic()
            done = Dialogue.objects.filter(audit=audit, status=Dialogue.Status.DONE).count()
            log(f"{tag}: {done:,}/{total:,} done after {time.time() - launched:.0f} s, load {os.getloadavg()[0]:.1f}")
        return None

    finished.last = time.monotonic()
    status = wait_for(f"audit {tag}", finished, args.timeout)
    watching = watcher.stop() if watcher else None
    audit.refresh_from_db()
    elapsed = audit.finished_at.timestamp() - launched if audit.finished_at else time.time() - launched
    dialogues = Dialogue.objects.filter(audit=audit)
    done = dialogues.filter(status=Dialogue.Status.DONE).count()
    span = dialogues.aggregate(first=Min("started_at"), last=Max("finished_at"))
    engine = (span["last"] - span["first"]).total_seconds() if span["first"] and span["last"] else float("nan")
    log(f"{tag}: {status} in {elapsed:.1f} s ({done / elapsed:.1f} dialogues/s); waiting for the analysis")

    key = parameters_hash(AnalysisParameters())

    def analysed():
        row = AnalysisResult.objects.filter(audit=audit, parameters_hash=key).values("status", "seconds").first()
        return row if row and row["status"] in (AnalysisResult.Status.DONE, AnalysisResult.Status.FAILED) else None

    row = wait_for(f"analysis {tag}", analysed, args.timeout)
    ready = time.time() - (audit.finished_at.timestamp() if audit.finished_at else launched)
    bytes_after = database_bytes()
    result = {
        "tag": tag,
        "size": size,
        "watched": watched,
        **shape,
        "dialogues": total,
        "done": done,
        "status": status,
        "launch_to_finished_s": round(elapsed, 1),
        "dialogues_per_s": round(done / elapsed, 2),
        "engine_span_s": round(engine, 1),
        "database_bytes_per_dialogue": round((bytes_after[0] - bytes_before[0]) / max(total, 1)),
        "audit_tables_bytes_per_dialogue": round((bytes_after[1] - bytes_before[1]) / max(total, 1)),
        "database_bytes_after": bytes_after[0],
        "analysis_status": row["status"],
        "analysis_worker_s": round(row["seconds"], 1),
        "analysis_ready_after_finish_s": round(ready, 1),
        "load_before": round(load_before, 2),
        "load_after_run": round(os.getloadavg()[0], 2),
        "during_run": watching,
        "audit": audit.pk,
    }
    if pages:
        result["pages"] = measure_pages(stack["browser"], audit.pk, args.repeat)
    log(f"{tag}: done, {json.dumps({k: v for k, v in result.items() if k not in ('pages', 'during_run')})}")
    return result


def ms(figure: dict | None) -> str:
    if not figure or not figure.get("n"):
        return "—" if not figure else f"status {figure.get('status')}"
    text = f"{figure['p50_ms']:,.0f} / {figure['p95_ms']:,.0f}"
    if "first_ms" in figure:
        text += f" (first {figure['first_ms']:,.0f})"
    if figure.get("status") not in (None, 200):
        text += f" status {figure['status']}"
    return text


def export_cell(figure: dict | None) -> str:
    if not figure:
        return "—"
    if figure.get("status") != 200:
        return f"status {figure.get('status')}"
    return f"{ms(figure)}; {figure['bytes'] / 2**20:,.1f} MiB; RSS +{figure['rss_peak_growth_mib']:,.0f} MiB"


def markdown(rungs: list[dict]) -> str:
    def title(rung: dict) -> str:
        name = f"{rung['dialogues']:,}"
        return name + {"unwatched": " (nobody watching)", "again": " (new audit, after the largest)"}.get(
            rung["kind"], "" if rung["kind"] == "rung" else f" ({rung['kind']})"
        )

    def during(rung: dict, page: str) -> str:
        figure = (rung.get("during_run") or {}).get(page)
        return ms(figure) + (f" (n={figure['n']})" if figure and figure.get("n") else "")

    def page(rung: dict, name: str) -> str:
        return ms((rung.get("pages") or {}).get(name))

    rows = [
        ("launch → finished (s)", lambda r: f"{r['launch_to_finished_s']:,}"),
        ("dialogues/s", lambda r: f"{r['dialogues_per_s']:,}"),
        ("database bytes per dialogue (database / audit tables)", lambda r: (
            f"{r['database_bytes_per_dialogue']:,} / {r['audit_tables_bytes_per_dialogue']:,}"
        )),
        ("analysis: worker's time / finished → ready (s)", lambda r: (
            f"{r['analysis_worker_s']} / {r['analysis_ready_after_finish_s']}"
        )),
        ("run page during the run, p50 / p95 ms", lambda r: during(r, "run page")),
        ("live panel during the run, p50 / p95 ms", lambda r: during(r, "live panel")),
        ("run page after the run, p50 / p95 ms", lambda r: page(r, "run page")),
        ("results page (cached analysis), p50 / p95 ms", lambda r: page(r, "results")),
        ("cell drill-down, p50 / p95 ms", lambda r: page(r, "cell")),
        ("paired transcripts of that cell, p50 / p95 ms", lambda r: page(r, "pairs")),
        ("HTML report, p50 / p95 ms", lambda r: page(r, "report")),
        *(
            (f"export {label}: p50 / p95 ms; size; serving worker's peak RSS growth", lambda r, label=label: (
                export_cell((r.get("pages") or {}).get(label))
            ))
            for label, _ in EXPORTS
        ),
        ("the researcher's failed requests during the run", lambda r: (
            ", ".join(f"{k}: {v}" for k, v in r["during_run"]["errors"].items()) or "none"
        )),
        ("load average before → after the run", lambda r: f"{r['load_before']} → {r['load_after_run']}"),
    ]  # fmt: skip
    lines = ["| figure | " + " | ".join(title(r) for r in rungs) + " |", "|---" * (len(rungs) + 1) + "|"]
    for name, cell in rows:
        lines.append(f"| {name} | " + " | ".join(filled(cell, rung) for rung in rungs) + " |")
    return "\n".join(lines)


def filled(cell, rung: dict) -> str:
    """A cell of the table, or a dash where the rung has no such figure (the re-measured pages have no run)."""
    try:
        return cell(rung)
    except (KeyError, TypeError):
        return "—"


def autovacuum_over(limit: float = 600.0) -> float:
    """Seconds waited until PostgreSQL's autovacuum workers are idle (the largest rung's rows set them to work for
    minutes, beside the pages being measured), at most `limit`."""
    from django.db import connection

    started = time.monotonic()
    while time.monotonic() - started < limit:
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'autovacuum worker'")
            if not cursor.fetchone()[0]:
                break
        time.sleep(2)
    waited = round(time.monotonic() - started, 1)
    log(f"autovacuum idle after {waited} s")
    return waited


def watched_ratio(rungs: list[dict]) -> float | None:
    """Throughput with a researcher watching over throughput with nobody watching, at the first size: the mean
    dialogues/s of the watched audits (the first and last of the ABBA four) over the unwatched ones'."""
    rates = {True: [], False: []}
    for rung in rungs:
        if rung.get("dialogues") == rungs[0]["dialogues"] and rung["kind"] in ("rung", "watched again", "unwatched"):
            rates[rung["kind"] != "unwatched"].append(rung["dialogues_per_s"])
    if not rates[True] or not rates[False]:
        return None
    return round((sum(rates[True]) / len(rates[True])) / (sum(rates[False]) / len(rates[False])), 3)


def commit() -> str:
    def git(*words: str) -> str:
        return subprocess.run(["git", *words], cwd=ROOT, capture_output=True, text=True).stdout.strip()

    return git("rev-parse", "--short", "HEAD") + (" (with uncommitted changes)" if git("status", "--porcelain") else "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[2000, 10000, 40000], help="dialogues per rung")
    parser.add_argument("--design", choices=tuple(DESIGNS), default="explicit")
    parser.add_argument("--tutors", type=int, default=2, help="2: a fair and a planted-bias tutor; more are fair")
    parser.add_argument("--unwatched-size", type=int, default=-1, help="-1: the first size; 0: none")
    parser.add_argument("--no-again", action="store_true", help="no second small audit after the largest rung")
    parser.add_argument("--repeat", type=int, default=5, help="timed requests of each page after its first")
    parser.add_argument("--workers", type=int, default=2, help="Celery worker processes")
    parser.add_argument("--worker-threads", type=int, default=8, help="threads per worker (docker-compose: 8)")
    parser.add_argument("--web-workers", type=int, default=4)
    parser.add_argument("--web-threads", type=int, default=4)
    parser.add_argument("--batch-size", type=int, default=100, help="dialogues per task (the launch form's default)")
    parser.add_argument("--timeout", type=float, default=4 * 3600, help="seconds to wait for a run or analysis")
    parser.add_argument("--json", default="", help="also write every figure to this file")
    parser.add_argument("--keep-database", action="store_true")
    args = parser.parse_args()
    if args.tutors < 2:
        parser.error("--tutors: at least 2 (the fair and the planted-bias tutor)")
    sizes = sorted(args.sizes)
    unwatched = sizes[0] if args.unwatched_size < 0 else args.unwatched_size

    header = {
        "cpu": cpu_model(),
        "nproc": os.cpu_count(),
        "python": platform.python_version(),
        "commit": commit(),
        "load_at_start": os.getloadavg(),
        "started": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "stack": f"gunicorn {args.web_workers}×{args.web_threads} (gthread), {args.workers} Celery worker processes × "
        f"{args.worker_threads} threads, PostgreSQL + Redis on loopback, DEBUG=0",
        "design": args.design,
    }
    print(json.dumps(header), flush=True)
    labelling.recreate_database()
    subprocess.run(["redis-cli", "-u", BROKER, "del", QUEUE], capture_output=True)
    django_setup()
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = labelling.start_gunicorn(port, args.web_workers, args.web_threads, boot_seconds=180)
    workers = start_workers(args.workers, args.worker_threads)
    rungs: list[dict] = []
    started = time.monotonic()
    try:
        cookies = researcher_cookie()
        base = f"http://127.0.0.1:{port}"
        stack = {"base": base, "cookies": cookies, "browser": Browser(base, cookies, server.pid)}
        time.sleep(3)  # let the workers connect to the broker
        # Not measured: the workers' first tasks (imports, connections) and gunicorn's first pages.
        run_rung(args.tutors * 10, "warm-up", args, stack, watched=True, pages=False)
        for n, size in enumerate(sizes):
            rung = run_rung(size, f"r{n}-{size}", args, stack, watched=True, pages=True)
            rungs.append({**rung, "kind": "rung"})
            if n == 0 and unwatched:
                # Watched, unwatched, unwatched, watched (ABBA): neither side gains from running first or last.
                for tag, watched in (("u1", False), ("u2", False), ("w2", True)):
                    rung = run_rung(unwatched, f"{tag}-{unwatched}", args, stack, watched=watched, pages=False)
                    rungs.append({**rung, "kind": "watched again" if watched else "unwatched"})
        if len(sizes) > 1:
            # The first audit's pages once more: the same audit in a bigger database, once its autovacuum is over.
            header["autovacuum_wait_s"] = autovacuum_over()
            pages = measure_pages(stack["browser"], rungs[0]["audit"], args.repeat)
            rungs.append(
                {"kind": "first audit again, after the largest", "dialogues": rungs[0]["dialogues"], "pages": pages}
            )
            if not args.no_again:
                rung = run_rung(sizes[0], f"again-{sizes[0]}", args, stack, watched=True, pages=True)
                rungs.append({**rung, "kind": "again"})
    finally:
        labelling.stop(server)
        for worker in workers:
            labelling.stop(worker)
        from django.db import connections

        connections.close_all()
        if not args.keep_database:
            import psycopg

            with psycopg.connect(f"{labelling.PG}/postgres", autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{labelling.DB_NAME}" WITH (FORCE)')
        subprocess.run(["redis-cli", "-u", BROKER, "del", QUEUE], capture_output=True)
    header["total_minutes"] = round((time.monotonic() - started) / 60, 1)
    header["load_at_end"] = os.getloadavg()
    header["watched_over_unwatched"] = watched_ratio(rungs) if rungs else None
    if args.json:
        Path(args.json).write_text(json.dumps({"header": header, "rungs": rungs}, indent=2, default=str))
    print(json.dumps(header))
    print(markdown(rungs))


if __name__ == "__main__":
    main()
