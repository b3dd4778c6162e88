"""Benchmark of the server time of the results page (cached analysis) and the run page at 1,000 dialogues.

    DEBUG=1 .venv/bin/python benchmarks/page_latency.py [--root REPO] [--design paper|explicit] [--profile PAGE]

What it does: a fresh embedded (SQLite) database in a temporary directory; a simulation audit of 2 seeded
tutors (one with the planted first-language bias) × `--design`'s conditions (paper: control, the explicit
levels of gender, immigration, first language and SES, one implicit name per name cell and the opposite
cells, 26 conditions; explicit: the first two, 10) × questions over three domains (1,040 or 1,000 dialogues), run
to the end in this process through the engine and the offline simulation provider, as the demo is; its
default analysis computed in this process; then, as a logged-in researcher through Django's test client, GET
`/audits/results/<id>/`, `/audits/runs/<id>/` and the HTML report `/audits/results/<id>/report/`: one warm-up
request each (its time is `first_ms`: the first view in this process), then `--repeat` timed requests
(time.perf_counter around the request, so server time without a network), and one more inside
CaptureQueriesContext for the query count. Prints JSON: the CPU model (/proc/cpuinfo), each page's times,
median and query count. `--root` runs it against another checkout of the code (default: the one this file
is in), so one script measures before and after. Nothing here is a test; the numbers go to
benchmarks/RESULTS.md by hand.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import platform
import pstats
import statistics
import sys
import tempfile
import time
from pathlib import Path

DOMAINS = ("mathematics", "biology", "physics")
DIMENSIONS = ("gender", "immigration", "first_language", "ses")
DESIGNS = {"explicit": {}, "paper": {"implicit": True, "names_per_cell": 1, "opposite": True}}
QUESTIONS = {"explicit": 50, "paper": 20}  # 2 tutors × 10 × 50 = 1,000 and 2 × 26 × 20 = 1,040 dialogues


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def build_audit(questions: int, design: str):
    """A finished simulation audit of 2 tutors × the design's conditions × `questions` questions, run in this
    process: "explicit" is control + the explicit levels of DIMENSIONS (10 conditions), "paper" adds one
    implicit name per name cell and the opposite cells (26 conditions)."""
    from audits.conditions import ConditionChoice, build_conditions, default_levels, default_names
    from audits.models import Audit
    from audits.services.audit_lifecycle import audit_create
    from audits.services.dialogue_batches import audit_run_inline
    from audits.tests.engine_factories import PLANTED_BIAS, make_questions, simulation_endpoint

    per_domain = [questions // len(DOMAINS) + (i < questions % len(DOMAINS)) for i in range(len(DOMAINS))]
    chosen = [
        q for domain, n in zip(DOMAINS, per_domain, strict=True) for q in make_questions(n, domain=domain, prefix="lat")
    ]
    student = simulation_endpoint("student")
    audit = audit_create(
        name="page latency audit",
        tutors=[simulation_endpoint("fair tutor"), simulation_endpoint("biased tutor", bias=PLANTED_BIAS)],
        student_endpoint=student,
        judge_endpoint=simulation_endpoint("judge"),
        questions=chosen,
        conditions=build_conditions(
            ConditionChoice(explicit_dimensions=DIMENSIONS, **DESIGNS[design]), default_levels(), default_names()
        ),
        batch_size=50,
    )
    audit_run_inline(audit=audit)
    audit.refresh_from_db()
    assert audit.status == Audit.Status.FINISHED, audit.status
    return audit


def measure(client, url: str, repeat: int) -> dict:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    started = time.perf_counter()
    response = client.get(url)  # warm-up (templates, imports, caches of the process)
    first = time.perf_counter() - started
    assert response.status_code == 200, (url, response.status_code)
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        response = client.get(url)
        times.append(time.perf_counter() - started)
        assert response.status_code == 200, (url, response.status_code)
    with CaptureQueriesContext(connection) as queries:
        client.get(url)
    return {
        "url": url,
        "first_ms": round(1000 * first, 1),
        "seconds": [round(t, 4) for t in times],
        "median_ms": round(1000 * statistics.median(times), 1),
        "queries": len(queries.captured_queries),
        "bytes": len(response.content),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=str(Path(__file__).resolve().parent.parent), help="the checkout to measure")
    parser.add_argument("--design", choices=tuple(DESIGNS), default="paper", help="the conditions (see build_audit)")
    parser.add_argument("--questions", type=int, default=0, help="questions (default: about 1,000 dialogues)")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument(
        "--profile", choices=("results", "run", "report"), default="", help="print a cProfile of one request"
    )
    args = parser.parse_args()

    root = Path(args.root).resolve()
    sys.path.insert(0, str(root))
    os.chdir(root)
    os.environ.setdefault("DEBUG", "1")
    os.environ["EDUFAIR_DATA_DIR"] = tempfile.mkdtemp(prefix="edufair-latency-")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "edufair_web.settings")
    os.environ["LOG_LEVEL"] = "WARNING"
    os.environ["ALLOWED_HOSTS"] = "testserver"  # Django's test client
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from django.test import Client

    from audits.services.analysis import audit_analysis
    from edufair_web.accounts.services import user_create_with_role

    started = time.perf_counter()
    audit = build_audit(args.questions or QUESTIONS[args.design], args.design)
    built = time.perf_counter() - started
    started = time.perf_counter()
    audit_analysis(audit=audit)
    analysed = time.perf_counter() - started

    client = Client()
    client.force_login(user_create_with_role(username="latency", role="researcher", password="latency-pw-1"))
    pages = {
        "results": f"/audits/results/{audit.pk}/",
        "run": f"/audits/runs/{audit.pk}/",
        "report": f"/audits/results/{audit.pk}/report/",
    }
    if args.profile:
        client.get(pages[args.profile])
        profiler = cProfile.Profile()
        profiler.enable()
        client.get(pages[args.profile])
        profiler.disable()
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(45)
        print(out.getvalue())
    print(
        json.dumps(
            {
                "root": str(root),
                "cpu": cpu_model(),
                "python": platform.python_version(),
                "design": args.design,
                "conditions": audit.conditions.count(),
                "dialogues": audit.dialogues.count(),
                "build_seconds": round(built, 1),
                "analysis_seconds": round(analysed, 1),
                **{name: measure(client, url, args.repeat) for name, url in pages.items()},
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
