"""Settings come from the environment; production refuses to start without a SECRET_KEY."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PRODUCTION = {
    "DEBUG": "0",
    "SECRET_KEY": "x" * 20 + "-production-secret-with-enough-length-and-variety-123456",
    "ALLOWED_HOSTS": "edufair.example.org",
    "CSRF_TRUSTED_ORIGINS": "https://edufair.example.org",
}

# Each test starts a fresh Python process to read the settings: the full suite runs them, `make test-fast` does not.
pytestmark = pytest.mark.slow


def run_python(code: str, **env) -> subprocess.CompletedProcess:
    ignored = {
        "DEBUG",
        "SECRET_KEY",
        "DATABASE_URL",
        "CELERY_BROKER_URL",
        "EDUFAIR_DATA_DIR",
        "DJANGO_ALLOW_ASYNC_UNSAFE",
    }
    clean = {k: v for k, v in os.environ.items() if k not in ignored}
    clean.update(env)
    clean["DJANGO_SETTINGS_MODULE"] = "edufair_web.settings"
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=clean, capture_output=True, text=True, timeout=60)


def test_missing_secret_key_without_debug_is_a_startup_error():
    result = run_python("import django; django.setup()", DEBUG="0")
    assert result.returncode != 0
    assert "SECRET_KEY is not set" in result.stderr


def test_sqlite_default_uses_wal_immediate_and_a_busy_timeout(tmp_path):
    code = (
        "import django; django.setup(); from django.conf import settings as s; "
        "o = s.DATABASES['default']['OPTIONS']; print(s.DATABASES['default']['NAME']); "
        "print(o['transaction_mode'], o['timeout'], 'journal_mode=WAL' in o['init_command']); "
        "print(s.CELERY_BROKER_URL)"
    )
    result = run_python(code, DEBUG="1", EDUFAIR_DATA_DIR=str(tmp_path))
    assert result.returncode == 0, result.stderr
    name, options, broker = result.stdout.strip().splitlines()
    assert name == str(tmp_path / "edufair.sqlite3")
    assert options == "IMMEDIATE 30 True"
    assert broker == f"sqla+sqlite:///{tmp_path / 'celery-broker.sqlite3'}"


def test_database_url_and_redis_broker_are_read(tmp_path):
    code = (
        "import django; django.setup(); from django.conf import settings as s; d = s.DATABASES['default']; "
        "print(d['ENGINE'], d['NAME'], d['HOST']); print(s.CELERY_BROKER_URL, s.CELERY_BROKER_TRANSPORT_OPTIONS)"
    )
    result = run_python(
        code,
        DEBUG="1",
        DATABASE_URL="postgres://app@db.internal:5432/edufair",
        CELERY_BROKER_URL="redis://cache.internal:6379/0",
        CELERY_VISIBILITY_TIMEOUT="7200",
        EDUFAIR_DATA_DIR=str(tmp_path),
    )
    assert result.returncode == 0, result.stderr
    db_line, broker_line = result.stdout.strip().splitlines()
    assert db_line == "django.db.backends.postgresql edufair db.internal"
    assert broker_line == "redis://cache.internal:6379/0 {'visibility_timeout': 7200}"


def test_postgresql_prepares_statements_unless_turned_off(tmp_path):
    code = (
        "import django; django.setup(); from django.conf import settings as s; "
        "o = s.DATABASES['default'].get('OPTIONS', {}); "
        "print(o.get('server_side_binding'), o.get('prepare_threshold'))"
    )
    env = dict(DEBUG="1", DATABASE_URL="postgres://app@db.internal:5432/edufair", EDUFAIR_DATA_DIR=str(tmp_path))
    on = run_python(code, **env)
    assert on.returncode == 0, on.stderr
    assert on.stdout.strip() == "True 5"
    off = run_python(code, DATABASE_PREPARED_STATEMENTS="0", **env)
    assert off.stdout.strip() == "None None"


def test_behind_a_transaction_pooler_postgresql_reads_without_server_side_cursors(tmp_path):
    code = (
        "import django; django.setup(); from django.conf import settings as s; "
        "print(s.DATABASES['default'].get('DISABLE_SERVER_SIDE_CURSORS', False))"
    )
    env = dict(DEBUG="1", DATABASE_URL="postgres://app@pgbouncer:6432/edufair", EDUFAIR_DATA_DIR=str(tmp_path))
    assert run_python(code, **env).stdout.strip() == "False"
    pooled = run_python(code, DATABASE_TRANSACTION_POOLING="1", **env)
    assert pooled.returncode == 0, pooled.stderr
    assert pooled.stdout.strip() == "True"


def test_celery_app_is_json_only_acks_late_and_prefetches_one():
    code = (
        "import django; django.setup(); from edufair_web.celery import app; c = app.conf; "
        "print(c.task_serializer, sorted(c.accept_content), c.task_acks_late, c.task_reject_on_worker_lost, "
        "c.worker_prefetch_multiplier)"
    )
    result = run_python(code, DEBUG="1")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "json ['json'] True True 1"


@pytest.mark.slow
def test_check_deploy_reports_no_warnings_in_production(tmp_path):
    env = dict(PRODUCTION, EDUFAIR_DATA_DIR=str(tmp_path))
    # The browser tests set DJANGO_ALLOW_ASYNC_UNSAFE for Playwright in this process; production does not.
    clean = {k: v for k, v in os.environ.items() if k not in {"DEBUG", "SECRET_KEY", "DJANGO_ALLOW_ASYNC_UNSAFE"}}
    clean.update(env)
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=clean,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues (0 silenced)." in result.stdout
