"""An endpoint with a requests-per-minute budget, served by a local server that
enforces it (429 with Retry-After beyond it), used by two worker processes at once — the requests reach the
server at the budget (±10 %) and the audit finishes with every dialogue done and no failed call. The two
processes share the budget through Redis when the broker is Redis (CI), the database otherwise (locally)."""

import pytest

from audits.models import Audit, Dialogue, EndpointLimitStatus, LLMCall
from audits.services.audit_lifecycle import audit_create, audit_launch
from audits.tests.engine_factories import explicit_conditions, make_questions, openai_endpoint
from audits.tests.openai_server import OpenAITestServer
from conftest import wait_for

RPM = 180
# The server counts over 10-second windows (providers quantise their per-minute limits similarly).
SERVER_WINDOW_SECONDS = 10


def per_minute(times: list[float]) -> float:
    return (len(times) - 1) / (times[-1] - times[0]) * 60


@pytest.mark.services
@pytest.mark.slow
def test_two_workers_hold_the_rpm_budget_and_lose_no_call(celery_worker_process, settings, monkeypatch):
    queue = celery_worker_process.queue
    settings.AUDITS_TASK_QUEUE = queue
    monkeypatch.setenv("CELERY_QUEUE", queue)

    with OpenAITestServer(delay=0.02) as server:
        server.state.rpm, server.state.rpm_window = RPM, SERVER_WINDOW_SECONDS
        # One endpoint plays every part, so its budget is the server's whole budget.
        endpoint = openai_endpoint("rate-limited", server.base_url, max_concurrency=4, requests_per_minute=RPM)
        audit = audit_create(
            name="rate limited",
            tutors=[endpoint],
            student_endpoint=endpoint,
            judge_endpoint=endpoint,
            questions=make_questions(2, prefix="rl"),
            conditions=explicit_conditions(),
            batch_size=1,
        )
        workers = [celery_worker_process(concurrency=2, name=f"rl{i}")[1] for i in range(2)]
        audit_launch(audit=audit)
        wait_for(
            lambda: Audit.objects.get(pk=audit.pk).status == Audit.Status.FINISHED,
            timeout=120,
            message="the two workers to finish the audit",
            processes=workers,
        )
        served, served_at = server.served, list(server.state.served_at)

    assert set(Dialogue.objects.filter(audit=audit).values_list("status", flat=True)) == {Dialogue.Status.DONE}
    assert not LLMCall.objects.filter(endpoint=endpoint).exclude(status=LLMCall.Status.OK).exists()
    answered = [at for at, request in zip(served_at, served, strict=True) if request.status == 200]
    # (Two processes may ask the same request at the same moment; both answers count against the budget.)
    assert len(answered) >= LLMCall.objects.filter(endpoint=endpoint).count()
    print(
        f"{len(served)} requests, {len(answered)} answered over {answered[-1] - answered[0]:.1f} s: "
        f"{per_minute(sorted(served_at)):.0f} sent/min, {per_minute(answered):.0f} answered/min (budget {RPM})"
    )
    assert answered[-1] - answered[0] > 10, "too short a run to measure a rate"
    # Every attempt passed the budget, so even counting the 429s the server saw no more than the budget.
    assert per_minute(sorted(served_at)) <= RPM * 1.1
    assert RPM * 0.9 <= per_minute(answered) <= RPM * 1.1
    # Both processes sent requests, and each reported its in-flight limit for the audit page.
    statuses = EndpointLimitStatus.objects.filter(endpoint=endpoint)
    assert statuses.count() == 2
    assert all(1 <= s.limit <= 4 and s.ceiling == 4 for s in statuses)
