"""Benchmark of the memory one Label Studio import request takes: its peak above the process's baseline.

    DEBUG=1 .venv/bin/python benchmarks/label_studio_import_memory.py [--tasks 30000] [--runs 3] [--root CHECKOUT]

Each measurement runs in a fresh process (this file with `--one`), on a fresh SQLite database in a temporary directory:
it creates a project with two yes/no questions and a researcher, builds a Label Studio export of `--tasks` small tasks
whose category is not the project's (so the import refuses every task at its check, after reading all of them — the
error path a hostile or careless file takes), resets the kernel's high-water mark (`/proc/self/clear_refs`) and posts
the export three ways: as the API's JSON `content`, as the API's file upload, and as the page's file upload. It prints
the peak resident memory above the baseline (VmHWM after the request minus VmRSS before it), the file's size and the
time. `--root` measures another checkout (e.g. a worktree of an older commit) with this script, so that a change and
its baseline are measured in the same run.

Nothing here is a test; the numbers go to benchmarks/RESULTS.md by hand, with this command.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WAYS = ("api-content", "api-file", "page")


def status_mib(field: str) -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"{field} not in /proc/self/status")


def export_text(tasks: int) -> str:
    region = {"from_name": "q1", "type": "choices", "value": {"choices": ["yes"]}}
    return json.dumps(
        [
            {"id": n, "data": {"text": "t", "category": "Z"}, "annotations": [{"completed_by": 1, "result": [region]}]}
            for n in range(tasks)
        ]
    )


def one(way: str, tasks: int) -> dict:
    """In a fresh process: the peak of one import request, posted `way`."""
    import django

    django.setup()
    from django.conf import settings
    from django.contrib.auth.models import User
    from django.core.management import call_command
    from django.test import Client
    from rest_framework.test import APIClient

    from annotation.services.projects import project_create, question_create, stage_create

    settings.ALLOWED_HOSTS = ["testserver"]
    # The page renders static URLs; no collectstatic manifest exists here.
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }
    call_command("migrate", verbosity=0)
    choices = [{"value": "yes", "label": "Yes"}, {"value": "no", "label": "No"}]
    project = project_create(name="memory", categories=["A", "B"], subjects=["maths"])
    questions = [question_create(project=project, key=k, prompt=f"{k}?", choices=choices) for k in ("q1", "q2")]
    stage_create(project=project, name="Stage 1", questions=questions, overlap=2)
    user = User.objects.create(username="memory-benchmark", is_superuser=True)
    content = export_text(tasks)
    body = json.dumps({"content": content}).encode() if way == "api-content" else content.encode()
    del content
    api_path = f"/api/annotation/projects/{project.pk}/label-studio-import/"
    Path("/proc/self/clear_refs").write_text("5")  # the high-water mark starts again from here
    baseline = status_mib("VmRSS")
    started = time.perf_counter()
    if way == "page":
        client = Client()
        client.force_login(user)
        upload = io.BytesIO(body)
        upload.name = "ls.json"
        response = client.post(f"/annotation/projects/{project.pk}/label-studio-import/", {"file": upload})
    else:
        client = APIClient()
        client.force_authenticate(user)
        if way == "api-content":
            response = client.post(api_path, body, content_type="application/json")
        else:
            upload = io.BytesIO(body)
            upload.name = "ls.json"
            response = client.post(api_path, {"file": upload}, format="multipart")
    return {
        "way": way,
        "status": response.status_code,
        "file_mib": round(len(body) / 2**20, 2),
        "peak_above_baseline_mib": round(status_mib("VmHWM") - baseline, 1),
        "seconds": round(time.perf_counter() - started, 2),
    }


def measure(root: Path, way: str, tasks: int) -> dict:
    data_dir = tempfile.mkdtemp(prefix="edufair-ls-memory-")
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "edufair_web.settings",
        "EDUFAIR_DATA_DIR": data_dir,
        "DATABASE_URL": f"sqlite:///{data_dir}/benchmark.sqlite3",
        "DEBUG": "0",
        "SECRET_KEY": "benchmark-only-" * 4,
        "SECURE_SSL_REDIRECT": "0",
        "LOG_LEVEL": "ERROR",
        "PYTHONPATH": str(root),
    }
    command = [sys.executable, str(Path(__file__).resolve()), "--one", way, "--tasks", str(tasks)]
    done = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=30_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout to measure (default: this one)")
    parser.add_argument("--one", choices=WAYS, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(args.one, args.tasks)))
        return
    results = {}
    for way in WAYS:
        runs = [measure(args.root.resolve(), way, args.tasks) for _ in range(args.runs)]
        results[way] = {
            "status": sorted({r["status"] for r in runs}),
            "file_mib": runs[0]["file_mib"],
            "peak_above_baseline_mib": [r["peak_above_baseline_mib"] for r in runs],
            "median_peak_mib": statistics.median(r["peak_above_baseline_mib"] for r in runs),
            "median_seconds": statistics.median(r["seconds"] for r in runs),
        }
    print(json.dumps({"root": str(args.root), "tasks": args.tasks, "results": results}, indent=2))


if __name__ == "__main__":
    main()
