"""Acceptance 4 (re-running a finished audit's design sends zero requests) and cloning with one factor
changed: the clone pays only for the calls that change."""

from collections import Counter

import pytest

from audits.models import Audit, Dialogue, LLMCall, PromptTemplate
from audits.selectors.runs import audit_progress
from audits.services.audit_lifecycle import audit_clone, audit_create
from audits.services.design import prompt_template_revise
from audits.services.dialogue_batches import audit_run_inline
from audits.tests.engine_factories import explicit_conditions, make_questions, openai_endpoint
from audits.tests.openai_server import OpenAITestServer

pytestmark = pytest.mark.django_db


@pytest.fixture
def server():
    with OpenAITestServer() as running:
        yield running


def design(server):
    tutor = openai_endpoint("rerun-tutor", server.base_url)
    other = openai_endpoint("rerun-other", server.base_url)
    return {
        "tutors": [tutor],
        "student_endpoint": other,
        "judge_endpoint": other,
        "questions": make_questions(3),
        "conditions": explicit_conditions(),
    }


def transcript(audit):
    return sorted(
        (d.question_id, d.condition.key, tuple(d.turns.values_list("role", "text")))
        for d in Dialogue.objects.filter(audit=audit).select_related("condition")
    )


def test_rerunning_a_finished_design_sends_zero_requests(server):
    spec = design(server)
    first = audit_create(name="first", **spec)
    assert audit_run_inline(audit=first) == Audit.Status.FINISHED
    sent = len(server.served)
    assert sent > 0

    again = audit_create(name="again", **spec)
    assert audit_run_inline(audit=again) == Audit.Status.FINISHED
    assert len(server.served) == sent  # zero new requests
    assert transcript(again) == transcript(first)
    progress = audit_progress(audit=again)
    # Every call the first run's dialogues made (sent, or shared within that audit) is reused by the second.
    made_first = sum(d.calls_sent + d.calls_cached for d in Dialogue.objects.filter(audit=first))
    assert progress["calls_sent"] == 0 and progress["calls_reused"] == made_first >= LLMCall.objects.count()
    assert progress["cost"] == 0


def test_a_clone_with_a_new_rubric_version_sends_only_judge_calls(server):
    first = audit_create(name="source", **design(server))
    audit_run_inline(audit=first)
    before = len(server.served)

    rubric = first.judge_template
    new_rubric = prompt_template_revise(template=rubric, text=rubric.text.replace("You are rating", "You rate"))
    clone = audit_clone(audit=first, change={"judge_template": new_rubric})
    assert clone.cloned_from == first and "judge_template" in clone.clone_change
    audit_run_inline(audit=clone)

    new_requests = Counter(r.purpose for r in server.served[before:])
    assert set(new_requests) == {"judge"}
    assert transcript(clone) == transcript(first)
    assert PromptTemplate.objects.get(pk=new_rubric.pk).used_at is not None


def test_a_clone_needs_exactly_one_known_factor(server):
    first = audit_create(name="source", **design(server))
    with pytest.raises(ValueError):
        audit_clone(audit=first, change={"seed": 1, "t_max": 3})
    with pytest.raises(ValueError):
        audit_clone(audit=first, change={"t_max": 3})
