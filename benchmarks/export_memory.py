"""Benchmark of the memory and time one results export takes: its resident peak above the process's baseline.

    DEBUG=1 .venv/bin/python benchmarks/export_memory.py [--dialogues 10000] [--runs 3] [--root CHECKOUT] [--baseline B]

It seeds one SQLite database in a temporary directory (a fresh process of this checkout): a finished audit of 2
simulated tutors × 10 conditions (control and the explicit levels of gender, immigration, first language and SES) ×
`--dialogues`/20 questions, three judged tutor turns per dialogue, written with bulk inserts
(`audits.tests.engine_factories.scored_audit`), and its analysis at n_boot=200 stored. Then each measurement runs in a
fresh process on a copy of that database: as a logged-in researcher through Django's test client, it resets the
kernel's high-water mark (`/proc/self/clear_refs`), GETs `/api/audits/<id>/export/` (raw scores as CSV or Parquet, or
the JSON results) and reads the whole body as a server would (the pieces of a streamed response, else its content), and
after a warm-up request (the sidecar, `format=methods`: the first request's imports and caches), prints the peak
resident memory above the baseline (VmHWM after minus VmRSS before), the body's size and the time.
`--root` measures another checkout with this script (a copy of an older commit, e.g. `git archive 93fc887 | tar -x`);
`--baseline` measures that one too, in the same run. Prints JSON with the CPU model (/proc/cpuinfo).

Nothing here is a test; the numbers go to benchmarks/RESULTS.md by hand, with this command.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXPORTS = {"csv": ("csv", "raw_scores"), "json": ("json", "contrasts"), "parquet": ("parquet", "raw_scores")}
N_BOOT = 200


def status_mib(field: str) -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"{field} not in /proc/self/status")


def cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor()


def _django():
    import django

    django.setup()
    from django.conf import settings

    settings.ALLOWED_HOSTS = ["testserver"]


def seed(dialogues: int) -> dict:
    """In a fresh process: the audit, its analysis and a researcher."""
    _django()
    from django.contrib.auth.models import User
    from django.core.management import call_command

    from audits.models import Dialogue
    from audits.services.analysis import AnalysisParameters, audit_analysis
    from audits.tests.engine_factories import scored_audit

    call_command("migrate", verbosity=0)
    started = time.perf_counter()
    audit = scored_audit("export benchmark", questions=max(1, dialogues // 20))
    audit_analysis(audit=audit, parameters=AnalysisParameters(n_boot=N_BOOT))
    User.objects.create(username="export-benchmark", is_superuser=True)
    return {
        "audit": audit.pk,
        "dialogues": Dialogue.objects.filter(audit=audit).count(),
        "seed_seconds": round(time.perf_counter() - started, 1),
    }


def one(export: str, audit_id: int) -> dict:
    """In a fresh process: the peak and time of one export request, its body read to the end."""
    _django()
    from django.contrib.auth.models import User
    from django.test import Client

    client = Client()
    client.force_login(User.objects.get(username="export-benchmark"))
    fmt, table = EXPORTS[export]
    url = f"/api/audits/{audit_id}/export/"
    client.get(url, {"format": "methods", "n_boot": N_BOOT})  # warm-up: the first request's imports and caches
    if fmt == "parquet":
        import pyarrow.parquet  # noqa: F401 - imported by the export's first piece; its modules are not the export's
    Path("/proc/self/clear_refs").write_text("5")  # the high-water mark starts again from here
    baseline = status_mib("VmRSS")
    started = time.perf_counter()
    response = client.get(url, {"format": fmt, "table": table, "n_boot": N_BOOT})
    streamed = bool(getattr(response, "streaming", False))
    size = sum(len(piece) for piece in response.streaming_content) if streamed else len(response.content)
    return {
        "export": export,
        "status": response.status_code,
        "streamed": streamed,
        "body_mib": round(size / 2**20, 1),
        "peak_above_baseline_mib": round(status_mib("VmHWM") - baseline, 1),
        "seconds": round(time.perf_counter() - started, 2),
    }


def _run(root: Path, data_dir: str, *arguments: str) -> dict:
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "edufair_web.settings",
        "EDUFAIR_DATA_DIR": data_dir,
        "DATABASE_URL": f"sqlite:///{data_dir}/benchmark.sqlite3",
        "DEBUG": "0",
        "SECRET_KEY": "benchmark-only-" * 4,
        "SECURE_SSL_REDIRECT": "0",
        "LOG_LEVEL": "ERROR",
        "THROTTLE_EXPENSIVE_READ_RATE": "off",
        "PYTHONPATH": str(root),
    }
    command = [sys.executable, str(Path(__file__).resolve()), *arguments]
    done = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def measure(root: Path, seeded: str, export: str, audit_id: int) -> dict:
    data_dir = tempfile.mkdtemp(prefix="edufair-export-memory-")
    shutil.copy(Path(seeded) / "benchmark.sqlite3", Path(data_dir) / "benchmark.sqlite3")
    try:
        return _run(root, data_dir, "--one", export, "--audit", str(audit_id))
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dialogues", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout to measure (default: this one)")
    parser.add_argument("--baseline", type=Path, help="another checkout to measure in the same run (before a change)")
    parser.add_argument("--exports", default="csv,json,parquet", help="which exports (csv, json, parquet)")
    parser.add_argument("--one", choices=tuple(EXPORTS), help=argparse.SUPPRESS)
    parser.add_argument("--audit", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--seed", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.seed:
        print(json.dumps(seed(args.dialogues)))
        return
    if args.one:
        print(json.dumps(one(args.one, args.audit)))
        return
    seeded = tempfile.mkdtemp(prefix="edufair-export-seed-")
    try:
        audit = _run(ROOT, seeded, "--seed", "--dialogues", str(args.dialogues))
        roots = [*([args.baseline.resolve()] if args.baseline else []), args.root.resolve()]
        results = {}
        for root in roots:
            for export in args.exports.split(","):
                runs = [measure(root, seeded, export, audit["audit"]) for _ in range(args.runs)]
                if any(run["status"] != 200 for run in runs):
                    results[f"{root}:{export}"] = {"status": sorted({run["status"] for run in runs})}
                    continue
                results[f"{root}:{export}"] = {
                    "streamed": runs[0]["streamed"],
                    "body_mib": runs[0]["body_mib"],
                    "peak_above_baseline_mib": [run["peak_above_baseline_mib"] for run in runs],
                    "median_peak_mib": statistics.median(run["peak_above_baseline_mib"] for run in runs),
                    "seconds": [run["seconds"] for run in runs],
                    "median_seconds": statistics.median(run["seconds"] for run in runs),
                }
    finally:
        shutil.rmtree(seeded, ignore_errors=True)
    print(json.dumps({"cpu": cpu_model(), "nproc": os.cpu_count(), "audit": audit, "results": results}, indent=2))


if __name__ == "__main__":
    main()
