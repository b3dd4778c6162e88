"""Browser (Chromium) with a real Celery worker: the results page of a
440-dialogue audit answers at once with the progress state, polls it while the worker computes the
analysis, and then shows the results — and no request of the browser takes more than one second.

The audit has the demo audit's shape (2 tutors × control + 9 explicit levels × 22 questions) with its
dialogues, turns and judge scores written directly (`scored_audit`), so the test spends its time on the
page and the worker, not on running models. Each request's duration is Playwright's timing of it (from
the request's start to the end of its response).
"""

import time

import pytest
from django.template.loader import get_template
from django.test import Client

from audits.models import AnalysisResult
from audits.tests.engine_factories import scored_audit
from conftest import browser_login, wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.services, pytest.mark.browser]

MAX_REQUEST_SECONDS = 1.0


def test_results_page_shows_progress_then_results_with_no_slow_request(
    page, live_server, celery_worker_process, settings, make_user
):
    settings.ANALYSIS_TASK_QUEUE = celery_worker_process.queue
    _, worker = celery_worker_process(concurrency=1)
    audit = scored_audit("browser progress audit")
    assert audit.dialogues.count() == 440
    user = make_user("researcher")
    # The first request of a process imports the URL map and compiles templates (a served process does
    # this at start-up): do it before the timed requests.
    warm = Client()
    warm.force_login(user)
    assert warm.get("/audits/").status_code == 200
    for name in ("audits/results/results.html", "audits/results/pending.html"):
        get_template(name)
    wait_for(lambda: "ready" in worker.log_path.read_text(), timeout=30, message="the worker", processes=[worker])

    timings: list[tuple[str, float]] = []
    page.on("requestfinished", lambda request: timings.append((request.url, request.timing["responseEnd"] / 1000)))
    browser_login(page, user.username)

    started = time.monotonic()
    page.goto(f"/audits/results/{audit.pk}/")
    progress = page.locator(".analysis-progress")
    assert progress.is_visible() and "Computing results" in progress.inner_text()
    assert page.locator("svg.heatmap").count() == 0

    page.wait_for_selector("svg.heatmap", timeout=30_000)  # the poll saw it done and reloaded the page
    seconds = time.monotonic() - started
    assert page.locator(".analysis-progress").count() == 0
    # The findings open the finished page; the methods are there, folded under them.
    assert page.locator("#findings-heading").is_visible()
    assert page.locator("#parameters-and-methods #methods-heading").count() == 1
    row = AnalysisResult.objects.get(audit=audit)
    assert row.status == "done" and row.runs == 1 and row.cells_done == row.cells_total > 0
    polls = [url for url, _ in timings if f"/audits/results/{audit.pk}/status/" in url]
    assert polls, "the progress state never polled"

    ours = [(url, duration) for url, duration in timings if url.startswith(live_server.url)]
    slow = [(url, round(duration, 3)) for url, duration in ours if duration > MAX_REQUEST_SECONDS]
    assert ours and not slow, f"requests over {MAX_REQUEST_SECONDS} s: {slow}"
    print(
        f"\n{len(ours)} requests, slowest {max(d for _, d in ours):.3f} s; {len(polls)} polls; "
        f"results shown {seconds:.1f} s after the first request; analysis {row.seconds:.2f} s on the worker, "
        f"{row.cells_total} cells"
    )
