"""`make demo` seeds and runs a small simulation audit (two simulated tutors, one with a planted bias), so the
dashboard opens on a finished audit; seeding twice changes nothing."""

import io

import pytest

from audits.demo import DEMO_AUDIT_NAME, demo_audit_seed
from audits.models import Audit, LLMCall
from audits.tests.engine_factories import make_questions

pytestmark = pytest.mark.django_db


def test_the_demo_audit_is_finished_after_the_seed_and_the_seed_is_idempotent(researcher_client):
    make_questions(2)
    out = io.StringIO()
    demo_audit_seed(out)
    audit = Audit.objects.get(name=DEMO_AUDIT_NAME)
    assert audit.status == Audit.Status.FINISHED and audit.uses_simulation
    assert audit.dialogues.count() == 2 * 2 * 10 == audit.dialogues.filter(status="done").count()
    assert "finished" in out.getvalue()
    calls = LLMCall.objects.count()

    demo_audit_seed(io.StringIO())
    assert Audit.objects.filter(name=DEMO_AUDIT_NAME).count() == 1 and LLMCall.objects.count() == calls

    home = researcher_client.get("/").content.decode()
    assert DEMO_AUDIT_NAME in home


def test_the_small_demo_audit_takes_at_most_its_questions_per_domain():
    make_questions(4)
    make_questions(3, domain="physics")
    demo_audit_seed(io.StringIO(), questions_per_domain=2)  # what `seed_demo --small` asks for
    audit = Audit.objects.get(name=DEMO_AUDIT_NAME)
    assert audit.status == Audit.Status.FINISHED
    assert audit.questions.filter(domain="mathematics").count() == 2 == audit.questions.filter(domain="physics").count()
    assert audit.dialogues.count() == 2 * 2 * 2 * 10  # 2 domains × 2 questions × 2 tutors × 10 conditions
