"""CI: a real audit over HTTP from what production installs — run by a virtualenv made from requirements.txt alone.

`.ci/runtime_audit` builds that virtualenv (var/runtime-venv, rebuilt only when requirements.txt changes) and runs
this script with its python. Nothing of requirements-dev.txt is importable here, so a module a real call needs that
only the test suite installs fails this step, as it would fail in production (the Docker image installs the same
file). The steps, each through the door an operator uses:

1. every shipped module of the three apps imports (tests, migrations and benchmarks aside);
2. a local OpenAI-protocol server starts as a process (`python -m audits.tests.openai_server --port 0`);
3. a fresh data directory (SQLite, nothing of CI's PostgreSQL or Redis): `manage.py migrate`,
   `manage.py import_questions` of the generic sample, `manage.py createsuperuser`;
4. tutor, student and judge endpoints of provider "openai" pointing at the server, created through the API
   (`POST /api/model-endpoints/`), each connection-tested through the API (loopback allowed by
   EDUFAIR_ENDPOINT_ALLOW_PRIVATE=1, as an operator allows a model server on the same host);
5. `manage.py run_audit --config FILE --inline`;
6. checks: the command says "finished", the API's audit reads outcome "finished" with every dialogue done and none
   failed, every tutor turn was judged, and the server served every request the ledger records as sent (plus the
   three connection tests).

Exits non-zero, saying what failed, otherwise. Settings are the production ones (DEBUG off, a SECRET_KEY).
"""

from __future__ import annotations

import importlib
import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
APPS = ("edufair_web", "audits", "annotation")
SKIPPED_PARTS = {"tests", "migrations"}
USERNAME = "ci-runtime"
AUDIT_CONFIG = """\
name: Runtime install audit over HTTP
tutors: [runtime-tutor]
student: runtime-student
judge: runtime-judge
selection: {domains: [mathematics], count: 2, seed: 0}
conditions: {control: true, explicit_dimensions: [first_language]}
seed: 0
t_max: 4
"""


class StepFailed(Exception):
    pass


STARTED = time.monotonic()


def step(message: str) -> None:
    print(f"runtime audit [{time.monotonic() - STARTED:4.1f} s]: {message}", flush=True)


def check(condition: bool, message: str) -> None:
    if not condition:
        raise StepFailed(message)


def environment(data_dir: Path) -> dict[str, str]:
    """The production settings on a fresh SQLite data directory: CI's PostgreSQL, Redis and cache are not used."""
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "CELERY_BROKER_URL", "CACHE_URL"}}
    env.pop("PYTHONPATH", None)
    env.update(
        {
            "EDUFAIR_DATA_DIR": str(data_dir),
            "DEBUG": "0",
            "SECRET_KEY": secrets.token_urlsafe(50),
            "ALLOWED_HOSTS": "testserver",
            "EDUFAIR_ENDPOINT_ALLOW_PRIVATE": "1",
            "DJANGO_SETTINGS_MODULE": "edufair_web.settings",
            "DJANGO_SUPERUSER_PASSWORD": secrets.token_urlsafe(24),
        }
    )
    return env


def manage(*args: str) -> str:
    """`python manage.py ARGS` in a process of its own (this virtualenv's python); its output, or StepFailed."""
    done = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=os.environ, capture_output=True, text=True, timeout=300
    )
    if done.returncode != 0:
        raise StepFailed(f"manage.py {' '.join(args)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
    return done.stdout


def shipped_modules() -> list[str]:
    names = []
    for app in APPS:
        for path in sorted((ROOT / app).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if SKIPPED_PARTS & set(parts):
                continue
            names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def import_every_shipped_module() -> int:
    failures = []
    modules = shipped_modules()
    for name in modules:
        try:
            importlib.import_module(name)
        except Exception as exc:  # noqa: BLE001 - every failure is reported, by module
            failures.append(f"{name}: {type(exc).__name__}: {exc}")
    check(not failures, "shipped modules that do not import from requirements.txt alone:\n  " + "\n  ".join(failures))
    return len(modules)


def start_server() -> tuple[subprocess.Popen, int]:
    server = subprocess.Popen(
        [sys.executable, "-m", "audits.tests.openai_server", "--port", "0"],
        cwd=ROOT,
        env=os.environ,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    line = server.stdout.readline()
    match = re.fullmatch(r"listening on (\d+)\n", line)
    if match is None:
        server.kill()
        raise StepFailed(f"the OpenAI-protocol server did not start: {line!r} {server.stderr.read()}")
    return server, int(match.group(1))


def server_stats(port: int) -> dict:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/stats", timeout=10) as response:
        return json.load(response)


def api(client, method: str, path: str, body: dict | None = None) -> dict:
    response = getattr(client, method)(
        path, data=json.dumps(body) if body is not None else None, content_type="application/json", secure=True
    )
    check(
        response.status_code < 300, f"{method.upper()} {path}: HTTP {response.status_code} {response.content[:500]!r}"
    )
    return response.json()


def run(data_dir: Path) -> None:
    settings = environment(data_dir)
    os.environ.clear()  # CI's DATABASE_URL and broker must not reach this process or the commands it runs
    os.environ.update(settings)
    sys.path.insert(0, str(ROOT))  # the project, as `manage.py` puts it there
    import django

    django.setup()
    count = import_every_shipped_module()
    step(f"{count} shipped modules import from requirements.txt alone")

    server, port = start_server()
    try:
        step(f"OpenAI-protocol server listening on 127.0.0.1:{port}")
        manage("migrate", "--no-input", "-v", "0")
        imported = manage("import_questions", "--source", "jsonl", "samples/generic_sample.jsonl", "--no-progress")
        step(f"migrated; {imported.strip().splitlines()[0]}")
        manage("createsuperuser", "--no-input", "--username", USERNAME, "--email", "ci-runtime@example.org")

        from django.contrib.auth.models import User
        from django.test import Client

        client = Client()
        client.force_login(User.objects.get(username=USERNAME))
        base_url = f"http://127.0.0.1:{port}/v1"
        for role in ("tutor", "student", "judge"):
            endpoint = api(
                client,
                "post",
                "/api/model-endpoints/",
                {"name": f"runtime-{role}", "provider": "openai", "base_url": base_url, "model": f"local-{role}"},
            )
            tested = api(client, "post", f"/api/model-endpoints/{endpoint['id']}/test-connection/")
            check(tested.get("ok") is True, f"connection test of the {role} endpoint failed: {tested}")
            step(f"{role} endpoint {endpoint['id']} answers: {tested['message']}")

        config = data_dir / "audit.yaml"
        config.write_text(AUDIT_CONFIG, encoding="utf-8")
        output = manage("run_audit", "--config", str(config), "--inline")
        step("run_audit: " + " | ".join(output.strip().splitlines()))
        match = re.search(r"^Audit (\d+):", output, re.MULTILINE)
        check(match is not None, f"run_audit did not name its audit:\n{output}")
        audit_id = int(match.group(1))
        check(
            re.search(rf"^Audit {audit_id} finished: ", output, re.MULTILINE) is not None,
            f"run_audit did not report the audit finished:\n{output}",
        )

        audit = api(client, "get", f"/api/audits/{audit_id}/")
        progress = api(client, "get", f"/api/audits/{audit_id}/progress/")
        total, done = progress["total"], progress["done"]
        check(total > 0, "the audit has no dialogues")
        check(
            done == total and progress["failed"] == 0,
            f"{done} of {total} dialogues done, {progress['failed']} failed: {progress['failures']}",
        )
        check(audit.get("outcome") == "finished", f"the API reads the audit as {audit.get('outcome')!r}")
        check(progress["turns_scored"] > 0, "no tutor turn was judged")
        check(
            progress["turns_unparsable"] == 0 and progress["turns_judge_failed"] == 0,
            f"judge turns unparsable {progress['turns_unparsable']}, failed {progress['turns_judge_failed']}",
        )
        served = server_stats(port)["requests"]
        sent = progress["calls_sent"] + progress["retries"]
        check(sent > 0, "the ledger records no request sent")
        check(
            served == sent + 3,
            f"the server served {served} requests; the ledger records {sent} attempts and 3 connection tests",
        )
        step(
            f"audit {audit_id}: {done} of {total} dialogues done, {progress['turns_scored']} tutor turns judged, "
            f"{served} requests served"
        )
    finally:
        server.kill()
        server.wait(10)


def main() -> int:
    data_dir = Path(tempfile.mkdtemp(prefix="edufair-runtime-audit-"))
    try:
        run(data_dir)
    except StepFailed as exc:
        print(f"runtime audit FAILED: {exc}", file=sys.stderr, flush=True)
        return 1
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
