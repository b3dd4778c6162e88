"""Shared test fixtures: users by role, service requirements, a real Celery worker, Chromium."""

import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.test.signals import setting_changed

# The tests' own OpenAI-protocol servers listen on loopback, which endpoints may not call by default: allow it
# as an operator would, in the environment (worker processes started by tests inherit it) and in this process's
# settings (pytest-django has loaded them already). Tests of the default refusal override the setting.
os.environ.setdefault("EDUFAIR_ENDPOINT_ALLOWED_HOSTS", "127.0.0.1,::1,localhost")
django_settings.EDUFAIR_ENDPOINT_ALLOWED_HOSTS = os.environ["EDUFAIR_ENDPOINT_ALLOWED_HOSTS"]
# Likewise the key variables the tests name go only to the loopback servers, as an operator binds each key to its host.
TEST_KEY_VARIABLES = ("EDUFAIR_KEY_TEST", "EDUFAIR_KEY_TEST_TUTOR", "EDUFAIR_KEY_ABSENT", "EDUFAIR_KEY_AZURE",
                      "EDUFAIR_KEY_VLLM", "EDUFAIR_KEY_LAB")  # fmt: skip
os.environ.setdefault("EDUFAIR_LLM_KEY_HOSTS", ",".join(f"{name}=127.0.0.1|localhost" for name in TEST_KEY_VARIABLES))
django_settings.EDUFAIR_LLM_KEY_HOSTS = os.environ["EDUFAIR_LLM_KEY_HOSTS"]

# Tests count throttles and cache results in this process's memory, emptied before each test (fresh_throttle_counts);
# the deployment's shared store (settings.shared_cache) is tested on its own (edufair_web/tests/test_throttle_store.py).
django_settings.CACHES = {
    **django_settings.CACHES,
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
}
setting_changed.send(sender=None, setting="CACHES", value=django_settings.CACHES, enter=True)

# PostgreSQL: a test database is thrown away, so its commits need not wait for the disk (the tests that commit ran
# about 6 % faster; benchmarks/RESULTS.md, "Test suite", set 7). libpq reads PGOPTIONS, so the worker processes and
# servers the tests start inherit it. A clean restart (the serial drill's) still writes every commit first.
os.environ.setdefault("PGOPTIONS", "-c synchronous_commit=off")

REQUIRE_SERVICES = os.environ.get("EDUFAIR_REQUIRE_SERVICES", "").strip().lower() in {"1", "true", "yes"}
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]


def service_missing(reason: str) -> None:
    """Skip locally, fail in CI: a test that needs a service never passes by not running."""
    if REQUIRE_SERVICES:
        pytest.fail(f"required service missing: {reason} (EDUFAIR_REQUIRE_SERVICES=1)")
    pytest.skip(reason)


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    """Log-ins in tests hash with MD5: the real hasher costs ~0.2 s per log-in and tests log in often."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def no_analysis_on_finish(settings):
    """An audit that finishes in a test queues no analysis (nobody consumes the broker, and a queued row would
    hold a later request at the progress state for its lease): tests of that queueing turn it on."""
    settings.ANALYSIS_ON_FINISH = False


@pytest.fixture(autouse=True)
def fresh_throttle_counts():
    """Each test starts with no throttle counts (they live in the default cache): tests log in often, all from
    127.0.0.1, and user ids repeat from one test to the next. Nor with results pages' parts kept by another."""
    from django.core.cache import cache, caches

    cache.clear()
    caches["results_pages"].clear()


@pytest.fixture
def make_user(db):
    from edufair_web.accounts.services import user_create_with_role

    def make(role: str, username: str | None = None, password: str = "pw-for-tests-1"):
        return user_create_with_role(
            username=username or f"{role}-{uuid.uuid4().hex[:6]}", role=role, password=password
        )

    return make


@pytest.fixture
def researcher(make_user):
    return make_user("researcher")


@pytest.fixture
def adjudicator(make_user):
    return make_user("adjudicator")


@pytest.fixture
def annotator(make_user):
    return make_user("annotator")


@pytest.fixture
def researcher_client(client, researcher):
    client.force_login(researcher)
    return client


@pytest.fixture
def annotator_client(client, annotator):
    client.force_login(annotator)
    return client


@pytest.fixture
def commit_hooks_run(monkeypatch):
    """`transaction.on_commit` callbacks run in a test that rolls back as they would in production: at once outside
    the code's own atomic blocks, and when its outermost block commits (the test's own transaction, which never
    commits, does not count). In a `transaction=True` test, commits are real and this changes nothing."""
    from django.db import connections, transaction

    def only_the_tests(connection) -> bool:
        blocks = connection.atomic_blocks
        return bool(blocks) and all(block._from_testcase for block in blocks) and not connection.needs_rollback

    def run_pending(connection) -> None:
        while connection.run_on_commit:
            _, function, robust = connection.run_on_commit.pop(0)
            try:
                function()
            except Exception:
                if not robust:
                    raise

    atomic_exit = transaction.Atomic.__exit__

    def exit_then_run(self, exc_type, exc_value, traceback):
        result = atomic_exit(self, exc_type, exc_value, traceback)
        connection = transaction.get_connection(self.using)
        if exc_type is None and only_the_tests(connection):
            run_pending(connection)
        return result

    monkeypatch.setattr(transaction.Atomic, "__exit__", exit_then_run)
    for alias in connections:
        connection = connections[alias]

        def on_commit(function, robust=False, *, _connection=connection, _on_commit=connection.on_commit):
            _on_commit(function, robust)
            if only_the_tests(_connection):
                run_pending(_connection)

        monkeypatch.setattr(connection, "on_commit", on_commit)


@pytest.fixture
def analysis_inline(monkeypatch, commit_hooks_run):
    """Fairness analyses computed at once, in the process that asks for them: the task a page would send
    to a worker runs its body (audits.services.analysis.analysis_run) on commit instead, so a results page,
    export or API call in the test answers with the results rather than the progress state.

    Tests of the worker path itself (progress, 202, a real worker) do not use this fixture.
    """
    from audits.services import analysis

    monkeypatch.setattr(
        analysis,
        "analysis_enqueue",
        lambda *, analysis_result_id: analysis.analysis_run(analysis_result_id=analysis_result_id),
    )


@pytest.fixture
def judge_runs_inline(monkeypatch, commit_hooks_run):
    """Judging runs carried out at once, in the process that queues them: the task a page or the API would
    send to a worker (audits.services.judge_runs) runs its body on commit instead, so the response already
    holds the judge's scores. Tests of the worker path itself do not use this fixture."""
    import annotation.tasks  # noqa: F401  (registers the tasks the runs name)
    import audits.tasks  # noqa: F401
    from audits.services import judge_runs
    from edufair_web.celery import app

    monkeypatch.setattr(judge_runs, "_enqueue", lambda run, countdown=None: app.tasks[run.task_name](run.pk))


def worker_environment() -> dict[str, str]:
    """Environment for a worker process that must see the test database and the same broker."""
    from django.conf import settings
    from django.db import connection

    env = dict(os.environ)
    db = connection.settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        env["DATABASE_URL"] = f"sqlite:///{db['NAME']}"
    else:
        host = db.get("HOST") or "127.0.0.1"
        port = db.get("PORT") or 5432
        auth = db.get("USER") or ""
        if db.get("PASSWORD"):
            auth += f":{db['PASSWORD']}"
        env["DATABASE_URL"] = f"postgres://{auth + '@' if auth else ''}{host}:{port}/{db['NAME']}"
    env["CELERY_BROKER_URL"] = settings.CELERY_BROKER_URL
    env["ANALYSIS_ON_FINISH"] = "1" if settings.ANALYSIS_ON_FINISH else "0"
    env.setdefault("DEBUG", "1")
    env["PYTHONUNBUFFERED"] = "1"
    return env


@pytest.fixture
def celery_worker_process(transactional_db, tmp_path):
    """Start real Celery workers (separate processes) on a queue of their own; yields a starter.

    `start()` returns (queue, process); every process is terminated at the end of the test.
    """
    processes: list[subprocess.Popen] = []
    queue = f"test-{uuid.uuid4().hex[:8]}"

    def start(concurrency: int = 2, name: str | None = None) -> tuple[str, subprocess.Popen]:
        log_path = tmp_path / f"worker-{len(processes)}.log"
        log = open(log_path, "w")  # noqa: SIM115
        cmd = [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "edufair_web",
            "worker",
            "--pool=threads",
            f"-c{concurrency}",
            "-Q",
            queue,
            "-n",
            f"{name or 'w' + str(len(processes))}-{queue}@%h",
            "--without-gossip",
            "--without-mingle",
            "-l",
            "INFO",
        ]
        proc = subprocess.Popen(
            cmd,
            env=worker_environment(),
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=Path(__file__).parent,
            start_new_session=True,
        )
        proc.log_path = log_path
        processes.append(proc)
        return queue, proc

    start.queue = queue
    start.log_dir = tmp_path
    yield start
    for proc in processes:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def wait_for(predicate, *, timeout: float = 60.0, interval: float = 0.2, message: str = "condition", processes=()):
    """Poll `predicate` until it returns something truthy; fail early if a watched process died."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        result = predicate()
        if result:
            return result
        for proc in processes:
            if proc.poll() is not None:
                log = getattr(proc, "log_path", None)
                tail = Path(log).read_text()[-3000:] if log else ""
                raise AssertionError(f"process exited with {proc.returncode} while waiting for {message}\n{tail}")
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout:.0f}s waiting for {message}")


@pytest.fixture(scope="module")
def chromium_browser():
    """Debian's Chromium driven by Playwright (never a downloaded browser).

    Module scope: Playwright's sync API keeps an event loop running in the main thread while it is
    open, which would break `asyncio.run` in the (non-browser) tests of other modules.
    """
    if not Path(CHROMIUM).exists() or shutil.which("chromium") is None and not Path(CHROMIUM).exists():
        service_missing("Debian's chromium is not installed (apt-get install -y chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        service_missing("playwright is not installed")
    os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(chromium_browser, live_server, tmp_path, request):
    context = chromium_browser.new_context(base_url=live_server.url)
    context.set_default_timeout(15000)
    pg = context.new_page()
    yield pg
    failed = getattr(request.node, "rep_call", None)
    if failed is not None and failed.failed:
        out = Path("test-results")
        out.mkdir(exist_ok=True)
        pg.screenshot(path=str(out / f"{request.node.name}.png"), full_page=True)
    context.close()


def browser_login(page, username: str, password: str = "pw-for-tests-1") -> None:
    page.goto("/accounts/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("button[type=submit]")
    page.wait_for_url(lambda url: "/accounts/login/" not in url)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if report.when == "call":
        item.rep_call = report
    return report


# A test that reaches none of these (directly or through its fixtures) and carries none of the markers below runs
# without a database, a server or a browser: it is marked `pure`, and `make test-fast` runs those alone.
IMPURE_FIXTURES = frozenset(
    {
        "db",
        "transactional_db",
        "django_db_reset_sequences",
        "django_db_serialized_rollback",
        "live_server",
        "client",
        "admin_client",
        "async_client",
        "chromium_browser",
        "celery_worker_process",
    }
)
IMPURE_MARKERS = ("django_db", "browser", "services")


def pytest_collection_modifyitems(config, items):
    _xdist_groups_kept(config, items)
    for item in items:
        if any(item.get_closest_marker(name) for name in IMPURE_MARKERS):
            continue
        if IMPURE_FIXTURES.isdisjoint(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.pure)


def _xdist_groups_kept(config, items):
    """`--dist loadgroup` sends an `xdist_group`'s tests to one worker by the suffix "@group" on their node ids, which
    pytest-xdist 3.8 writes to `item._nodeid`; pytest 9.2 reads node ids from `item._id`, so without this the
    suffix is lost and the group is split (Label Studio was started in both workers). Sets it where xdist's did not
    take; a no-op once xdist writes it where pytest reads it."""
    if not getattr(config.option, "loadgroup", False):
        return
    from _pytest.nodeid import coerce_node_id

    for item in items:
        names = sorted({str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
                        for mark in item.iter_markers("xdist_group")})  # fmt: skip
        if names and "@" not in item.nodeid and hasattr(item, "_id"):
            item._id = coerce_node_id(f"{item.nodeid}@{'_'.join(names)}")


@pytest.fixture(autouse=True)
def _limit_status_writes_held_for_the_flush(_django_db_marker):
    """The engine's limit-status reporter lives on the process's loop across tests and writes about a second after a
    test's last model call; a transactional test's TRUNCATE racing that write deadlocked on PostgreSQL. Its writes are
    let go when a test starts and held (none in progress) before the database is emptied: this fixture comes after
    pytest-django's, so its teardown runs first."""
    from audits.services.rate_limits import limit_statuses_pause

    limit_statuses_pause(False)
    yield
    limit_statuses_pause(True)


ROLLBACK_BREAKERS = frozenset({"transactional_db", "live_server", "celery_worker_process", "django_db_reset_sequences",
                               "django_db_serialized_rollback"})  # fmt: skip


def _rolls_back(request) -> bool:
    marker = request.node.get_closest_marker("django_db")
    names = set(request.fixturenames)
    if marker is None and "db" not in names:
        return False
    if marker is not None and any(marker.kwargs.get(key) for key in ("transaction", "reset_sequences",
                                                                      "serialized_rollback")):  # fmt: skip
        return False
    return ROLLBACK_BREAKERS.isdisjoint(names)


@pytest.fixture(autouse=True)
def engine_db_on_test_connection(request, monkeypatch):
    """In a test that rolls back, the engine's database work (`audits.llm.runtime`'s `run_blocking`) runs on the
    test's own thread, with its connection, inside its transaction, instead of on the process's database thread (a
    second connection, which would not see the test's rows and would wait on its lock): such a test needs no
    flush. The engine's closing of that thread's connection (between batches, after a status write) is skipped for
    the test's length, as it would end the test's transaction. Tests that need a second connection (a real worker,
    a live server, an outage, a kill) stay `transaction=True` and keep the database thread."""
    if not _rolls_back(request):
        yield
        return
    request.getfixturevalue("db")  # the test's transaction opens before this and rolls back after it
    from django.db import connections

    from audits.llm.runtime import CallerThreadExecutor, process_runtime

    runtime = process_runtime()
    for alias in connections:
        monkeypatch.setattr(connections[alias], "close", lambda: None)
    thread_pool, runtime.blocking = runtime.blocking, CallerThreadExecutor()
    try:
        yield
    finally:
        caller, runtime.blocking = runtime.blocking, thread_pool
        caller.drain()
