"""Crash drill: SIGKILL the process running a judge-validation re-run (`judging.judge_run`, the judge scored
again on the sampled turns through the engine's ledger), then run it again — the second run re-sends
nothing the ledger already holds, and the validation ends with exactly one score per item and metric.

The page and the API queue the re-run on a worker (annotation.tasks, whose body ends in `judge_run`); the
drill kills a separate Python process running `judge_run` on the same test database, with a real
OpenAI-protocol server answering slowly enough to be killed in the middle.
Runs on the embedded SQLite default and on PostgreSQL (CI).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.db.models import Count

from annotation.judge_validation.importing import labelled_file_import
from annotation.judge_validation.judging import PURPOSE_JUDGE
from annotation.judge_validation.services import judge_validation_create
from annotation.models import JudgeScore, JudgeValidation
from annotation.selectors.judge_validation import project_rubrics
from audits.judge import METRICS
from audits.models import LLMCall
from audits.tests.engine_factories import openai_endpoint
from audits.tests.openai_server import OpenAITestServer, messages_key
from conftest import wait_for, worker_environment

pytestmark = [pytest.mark.services, pytest.mark.slow]

SAMPLE = Path(settings.BASE_DIR) / "samples" / "mrbench_style_sample.json"
RUN_JUDGE = """
import os, sys
import django
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "edufair_web.settings")
django.setup()
from annotation.judge_validation.judging import judge_run
from annotation.models import JudgeValidation
print(judge_run(validation=JudgeValidation.objects.get(pk=int(sys.argv[1]))), flush=True)
"""


def start_rerun(validation: JudgeValidation, log: Path) -> subprocess.Popen:
    process = subprocess.Popen(
        [sys.executable, "-c", RUN_JUDGE, str(validation.pk)],
        env=worker_environment(),
        stdout=open(log, "w"),  # noqa: SIM115
        stderr=subprocess.STDOUT,
        cwd=settings.BASE_DIR,
        start_new_session=True,
    )
    process.log_path = log
    return process


def judge_ledger_keys() -> set[str]:
    return {
        messages_key(call.purpose, call.request["messages"])
        for call in LLMCall.objects.filter(status="ok", purpose=PURPOSE_JUDGE)
    }


def test_a_killed_judge_rerun_resumes_from_the_ledger(transactional_db, tmp_path):
    project = labelled_file_import(data=SAMPLE.read_bytes(), filename=SAMPLE.name, name="kill drill")
    items = project.items.filter(metadata__role__in=["sample", "imported"]).count()
    assert items == 8
    rubric = project_rubrics(project)[-1]

    # One call at a time, 0.4 s each: the kill lands after a few answers and well before the last.
    with OpenAITestServer(delay=0.4) as server:
        judge = openai_endpoint("judge under drill", server.base_url, max_concurrency=1)
        validation = judge_validation_create(project=project, judge_endpoint=judge, rubric=rubric)

        first = start_rerun(validation, tmp_path / "first.log")
        wait_for(
            lambda: len(judge_ledger_keys()) >= 3,
            timeout=60,
            message="three judge calls in the ledger",
            processes=[first],
        )
        os.killpg(first.pid, signal.SIGKILL)
        first.wait(timeout=10)
        ledger_at_kill = judge_ledger_keys()
        served_at_kill = len(server.served)
        assert len(ledger_at_kill) < items, "the re-run finished before the kill; slow the server down"
        # Scores are written in one transaction at the end: the killed run left none, and no half state.
        assert not JudgeScore.objects.filter(validation=validation).exists()
        assert JudgeValidation.objects.get(pk=validation.pk).scored_at is None

        second = start_rerun(validation, tmp_path / "second.log")
        assert second.wait(timeout=120) == 0, (tmp_path / "second.log").read_text()[-3000:]
        served_by_second = server.served[served_at_kill:]

    # Exactly one score per item and metric.
    scores = JudgeScore.objects.filter(validation=validation)
    assert scores.count() == items * len(METRICS)
    assert scores.values("item", "metric").annotate(n=Count("pk")).filter(n__gt=1).count() == 0
    validation.refresh_from_db()
    assert validation.status == JudgeValidation.Status.SCORED
    # Nothing the ledger held at the kill was sent again; what it held came from the cache.
    assert [r for r in served_by_second if r.messages_key in ledger_at_kill] == []
    assert validation.calls_cached >= len(ledger_at_kill)
    # The second run sent exactly the calls that are new in the ledger (the request in flight at the kill was
    # answered to a dead client and never recorded, so it is among them).
    assert validation.calls_sent == len(judge_ledger_keys() - ledger_at_kill)
    assert validation.calls_sent + validation.calls_cached == items
