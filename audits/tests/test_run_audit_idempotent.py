"""`run_audit --config FILE` twice is one audit (the config's content hash finds
it; `--new` makes another), resuming a finished audit — inline or on the workers — sends nothing and keeps
its launch and finish times, and "reused from the ledger" counts the calls dialogues shared within the audit."""

import io
import json

import pytest
from django.core.management import call_command

from audits.models import Audit, Dialogue, LLMCall
from audits.selectors.runs import audit_progress
from audits.tests.engine_factories import make_questions, simulation_endpoint

pytestmark = pytest.mark.django_db


@pytest.fixture
def config_file(tmp_path):
    make_questions(2, prefix="idem")
    for name in ("idem-tutor-a", "idem-tutor-b", "idem-student"):
        simulation_endpoint(name)
    config = {
        "name": "idempotent",
        "tutors": ["idem-tutor-a", "idem-tutor-b"],
        "student": "idem-student",
        "judge": "idem-student",
        "selection": {"domains": ["mathematics"], "count": 2, "seed": 0},
        "conditions": {"control": True},
        "t_max": 3,
    }
    path = tmp_path / "audit.json"
    path.write_text(json.dumps(config))
    return path, config


def run(*args) -> None:
    call_command("run_audit", *[str(a) for a in args], stdout=io.StringIO(), stderr=io.StringIO())


def test_the_same_config_twice_is_one_audit_and_a_finished_audit_keeps_its_times(config_file, tmp_path):
    path, config = config_file
    run("--config", path, "--inline")
    audit = Audit.objects.get()
    assert audit.status == Audit.Status.FINISHED and audit.config_hash
    calls = LLMCall.objects.count()
    times = (audit.launched_at, audit.finished_at)

    # The same content with its keys in another order, as YAML: the same audit, resumed, nothing sent.
    reordered = tmp_path / "audit.yaml"
    reordered.write_text("".join(f"{key}: {json.dumps(config[key])}\n" for key in reversed(list(config))))
    run("--config", reordered, "--inline")
    run("--config", path)  # on the workers: a finished audit with nothing pending is left as it is
    run(audit.pk, "--wait")
    assert Audit.objects.count() == 1
    audit.refresh_from_db()
    assert audit.status == Audit.Status.FINISHED
    assert (audit.launched_at, audit.finished_at) == times
    assert LLMCall.objects.count() == calls

    # Two tutors, one student at temperature 0: the student's opening request is the same in both
    # tutors' dialogues, paid once and reused once per further dialogue — counted, not 0.
    progress = audit_progress(audit=audit)
    dialogues = Dialogue.objects.filter(audit=audit)
    assert progress["calls_reused"] == sum(d.calls_cached for d in dialogues) > 0
    assert progress["calls_sent"] + progress["calls_reused"] == sum(d.calls_sent + d.calls_cached for d in dialogues)

    run("--config", path, "--new", "--inline")
    assert Audit.objects.count() == 2
    assert LLMCall.objects.count() == calls  # the new audit's calls all came from the ledger
