"""Adding (or re-running) a judge on a validation set is queued on a worker, not run in the request: the
API answers 202 with the run's progress and the page shows it; the task's body scores the set — online,
or through the Batch API when the judge endpoint is batch-capable (at the batch price, no chat call)."""

from pathlib import Path

import pytest
from django.conf import settings
from django.urls import reverse

from annotation.judge_validation.importing import labelled_file_import
from annotation.judge_validation.judging import judge_validation_run
from annotation.models import JudgeScore
from audits.judge import METRICS
from audits.models import JudgeRun, LLMCall
from audits.tests.engine_factories import openai_endpoint
from audits.tests.openai_batch_server import BatchTestServer

SAMPLE = Path(settings.BASE_DIR) / "samples" / "mrbench_style_sample.json"

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("commit_hooks_run")]  # tasks are sent on commit


@pytest.fixture
def enqueued(monkeypatch):
    """The tasks sent to the broker, kept here instead (no worker in this test)."""
    from audits.services import judge_runs

    sent = []
    monkeypatch.setattr(judge_runs, "_enqueue", lambda run, countdown=None: sent.append(run.pk))
    return sent


@pytest.mark.parametrize("batch_capable", [False, True], ids=["online", "batch"])
def test_a_judge_added_runs_on_a_worker_with_its_progress_shown(researcher_client, enqueued, settings, batch_capable):
    settings.JUDGE_BATCH_POLL_SECONDS = 0.05
    project = labelled_file_import(data=SAMPLE.read_bytes(), filename=SAMPLE.name, name="worker judge")
    judges_url = reverse("annotation-jv-judges", args=[project.pk])
    page_url = reverse("annotation:judge-validation", args=[project.pk])
    with BatchTestServer(batch_seconds=0.1) as server:
        judge = openai_endpoint("judge on a worker", server.base_url, batch_capable=batch_capable)
        added = researcher_client.post(judges_url, {"judge_endpoint": judge.pk}, content_type="application/json")
        assert added.status_code == 202, added.content
        run = added.json()["run"]
        assert (run["status"], run["judged"], run["total"], run["via_batch"]) == ("queued", 0, 8, batch_capable)
        assert enqueued == [run["id"]] and server.served == []  # nothing judged inside the request
        page = researcher_client.get(page_url).content.decode()
        assert "queued: 0 of 8 turns processed" in page and 'http-equiv="refresh"' in page
        # Asking again while it is open gives the same run.
        again = researcher_client.post(judges_url, {"judge_endpoint": judge.pk}, content_type="application/json")
        assert again.json()["run"]["id"] == run["id"] and enqueued == [run["id"]]

        assert judge_validation_run(run_id=run["id"]) == JudgeRun.Status.DONE
        chat_calls = server.counts()["judge"]
        batches = server.batches_created

    [state] = [j["run"] for j in researcher_client.get(judges_url).json() if j["run"]]
    assert (state["status"], state["judged"], state["open"]) == ("done", 8, False)
    validation_id = next(j["id"] for j in researcher_client.get(judges_url).json() if j["run"])
    assert JudgeScore.objects.filter(validation_id=validation_id, status="ok").count() == 8 * len(METRICS)
    if batch_capable:
        assert (chat_calls, batches) == (0, 1) and len(state["batches"]) == 1
        assert set(LLMCall.objects.filter(purpose="judge").values_list("price_factor", flat=True)) == {0.5}
    else:
        assert (chat_calls, batches) == (8, 0) and state["batches"] == []
    page = researcher_client.get(page_url).content.decode()
    assert "done: 8 of 8 turns processed" in page and 'http-equiv="refresh"' not in page
