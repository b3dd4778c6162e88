"""docker-compose.yml is checked by reading it: no Docker engine runs on the development machines.

Its services, commands and environment must match what edufair_web/settings.py reads.
"""

import re
from pathlib import Path

import dj_database_url
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def compose() -> dict:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


def variables_read_by_settings() -> set[str]:
    source = (ROOT / "edufair_web" / "settings.py").read_text()
    return set(re.findall(r"""(?:os\.environ\.get|env_bool|env_list)\(\s*["']([A-Z_]+)["']""", source))


def interpolate_defaults(value: str) -> str:
    """Resolve ${VAR:-default} and ${VAR:?message} the way compose would with nothing set."""
    value = re.sub(r"\$\{[A-Z_]+:-([^}]*)\}", r"\1", str(value))
    return re.sub(r"\$\{([A-Z_]+):\?[^}]*\}", r"<\1>", value)


def test_it_has_the_four_services_and_an_optional_pooler_with_health_checks(compose):
    default = {name for name, service in compose["services"].items() if not service.get("profiles")}
    assert default == {"postgres", "redis", "web", "worker"}
    assert compose["services"]["pgbouncer"]["profiles"] == ["pgbouncer"]
    for name, service in compose["services"].items():
        assert "healthcheck" in service, f"{name} has no health check"
    assert "pgdata" in compose["volumes"]
    assert "pgdata:/var/lib/postgresql/data" in compose["services"]["postgres"]["volumes"]


def test_web_migrates_collects_static_and_serves_with_gunicorn(compose):
    command = compose["services"]["web"]["command"]
    assert command.index("migrate --noinput") < command.index("collectstatic --noinput") < command.index("gunicorn")
    assert "edufair_web.wsgi:application" in command
    # Threaded workers with keep-alive: the configuration benchmarks/labelling_load.py measures.
    assert "--worker-class gthread" in command and "--threads ${GUNICORN_THREADS:-4}" in command
    assert "/healthz" in " ".join(compose["services"]["web"]["healthcheck"]["test"])


def test_worker_runs_celery_on_the_project_app(compose):
    command = compose["services"]["worker"]["command"]
    assert command[:4] == ["celery", "-A", "edufair_web", "worker"]
    assert "--pool=threads" in command


def test_app_environment_names_only_variables_the_settings_read(compose):
    read = variables_read_by_settings()
    for service in ("web", "worker"):
        environment = compose["services"][service]["environment"]
        assert set(environment) <= read, f"{service} sets variables the settings ignore: {set(environment) - read}"
        for required in (
            "SECRET_KEY",
            "DEBUG",
            "ALLOWED_HOSTS",
            "CSRF_TRUSTED_ORIGINS",
            "DATABASE_URL",
            "CELERY_BROKER_URL",
        ):
            assert required in environment, f"{service} lacks {required}"
        assert environment["DEBUG"] == "0"
        assert ":?" in environment["SECRET_KEY"], "SECRET_KEY must be required, never defaulted"


def test_database_and_broker_urls_point_at_the_compose_services(compose):
    environment = compose["services"]["web"]["environment"]
    database = dj_database_url.parse(interpolate_defaults(environment["DATABASE_URL"]))
    postgres = compose["services"]["postgres"]["environment"]
    assert database["ENGINE"] == "django.db.backends.postgresql"
    assert database["HOST"] == "postgres" and database["PORT"] == 5432
    assert database["NAME"] == postgres["POSTGRES_DB"] and database["USER"] == postgres["POSTGRES_USER"]
    assert database["PASSWORD"] == interpolate_defaults(postgres["POSTGRES_PASSWORD"])
    assert interpolate_defaults(environment["CELERY_BROKER_URL"]).startswith("redis://redis:6379/")
    assert "127.0.0.1" in interpolate_defaults(environment["ALLOWED_HOSTS"]).split(","), (
        "the health check calls 127.0.0.1"
    )


def test_dockerfile_installs_requirements_and_serves_the_wsgi_app():
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert "pip install -r requirements.txt" in dockerfile
    assert "python:3.11" in dockerfile
    assert "edufair_web.wsgi:application" in dockerfile


def test_the_optional_pgbouncer_pools_transactions_in_front_of_postgres(compose):
    pooler = compose["services"]["pgbouncer"]["environment"]
    postgres = compose["services"]["postgres"]["environment"]
    upstream = dj_database_url.parse(interpolate_defaults(pooler["DATABASE_URL"]))
    assert (upstream["HOST"], upstream["PORT"], upstream["NAME"]) == ("postgres", 5432, postgres["POSTGRES_DB"])
    assert upstream["USER"] == postgres["POSTGRES_USER"]
    assert upstream["PASSWORD"] == interpolate_defaults(postgres["POSTGRES_PASSWORD"])
    assert pooler["POOL_MODE"] == "transaction"
    # The app prepares statements by default (DATABASE_PREPARED_STATEMENTS): the pooler must keep them.
    assert int(pooler["MAX_PREPARED_STATEMENTS"]) > 0
    # Its server connections stay well under PostgreSQL's default max_connections of 100.
    assert int(interpolate_defaults(pooler["DEFAULT_POOL_SIZE"])) <= 50
    port = pooler["LISTEN_PORT"]
    assert port in " ".join(compose["services"]["pgbouncer"]["healthcheck"]["test"])
    for service in ("web", "worker"):
        environment = compose["services"][service]["environment"]
        # Pointed at the pooler as the file's header says, the app reaches it with the same credentials.
        through = environment["DATABASE_URL"].replace("${DB_ADDRESS:-postgres:5432}", f"pgbouncer:{port}")
        database = dj_database_url.parse(interpolate_defaults(through))
        assert (database["HOST"], database["PORT"]) == ("pgbouncer", int(port))
        assert (database["USER"], database["NAME"]) == (upstream["USER"], upstream["NAME"])
        assert "DATABASE_TRANSACTION_POOLING" in environment
        dependency = compose["services"][service]["depends_on"]["pgbouncer"]
        assert dependency["required"] is False  # the default start has no pooler
    header = (ROOT / "docker-compose.yml").read_text()
    assert f"DB_ADDRESS=pgbouncer:{port} DATABASE_TRANSACTION_POOLING=1" in header
