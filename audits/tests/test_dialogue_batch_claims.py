"""A dialogue batch claims its dialogues in one statement: one claim per batch, not one per dialogue; a
dialogue another worker holds is left to it, the others run; a claim cut off by the database runs nothing."""

import pytest
from django.db import OperationalError
from django.utils import timezone

from audits.models import Audit, Dialogue
from audits.services import dialogue_batches, leases
from audits.services.audit_lifecycle import audit_create, audit_start_inline
from audits.services.dialogue_batches import dialogue_batch_run
from audits.tests.engine_factories import explicit_conditions, make_questions, simulation_endpoint

pytestmark = pytest.mark.django_db(transaction=True)  # the batch writes from the runtime's database thread


def _audit(name: str) -> Audit:
    student = simulation_endpoint(f"{name} student")
    audit = audit_create(
        name=name,
        tutors=[simulation_endpoint(f"{name} tutor")],
        student_endpoint=student,
        judge_endpoint=student,
        questions=make_questions(3, prefix=name),
        conditions=explicit_conditions(),
        t_max=2,
    )
    audit_start_inline(audit=audit)
    return audit


def test_a_batch_claims_its_dialogues_in_one_statement_and_leaves_a_held_one(monkeypatch):
    audit = _audit("one claim")
    ids = sorted(Dialogue.objects.filter(audit=audit).values_list("pk", flat=True))
    assert len(ids) == 9  # 3 questions × (control + 2 levels)
    held = ids[0]
    plan, claim = dialogue_batches._batch_plan, leases.lease_claim

    def planned_then_taken(*args):
        # Between the batch's read of its dialogues and its claim, another worker takes one.
        found = plan(*args)
        claim(Dialogue.objects.filter(pk=held), token="other worker", seconds=600, statuses=[Dialogue.Status.PENDING])
        return found

    monkeypatch.setattr(dialogue_batches, "_batch_plan", planned_then_taken)
    claims = []

    def counted(jobs, **kwargs):
        claims.append(kwargs["token"])
        return claim(jobs, **kwargs)

    monkeypatch.setattr(leases, "lease_claim", counted)
    counts = dialogue_batch_run(audit_id=audit.pk, dialogue_ids=ids, worker="w")
    assert len(claims) == 1  # nine dialogues, one claim
    assert (counts["claimed"], counts["skipped"], counts["done"]) == (8, 1, 8)
    rows = {row.pk: row for row in Dialogue.objects.filter(audit=audit)}
    assert (rows[held].status, rows[held].claim_token, rows[held].runs) == (Dialogue.Status.RUNNING, "other worker", 1)
    assert all(rows[i].status == Dialogue.Status.DONE and rows[i].runs == 1 for i in ids[1:])


def test_a_batch_whose_claim_is_cut_off_runs_nothing_and_fails_nothing(monkeypatch):
    audit = _audit("cut claim")
    ids = list(Dialogue.objects.filter(audit=audit).values_list("pk", flat=True))
    monkeypatch.setattr(dialogue_batches, "through_outage", lambda *a: (_ for _ in ()).throw(OperationalError("gone")))
    counts = dialogue_batch_run(audit_id=audit.pk, dialogue_ids=ids, worker="w")
    assert (counts["claimed"], counts["interrupted"], counts["done"]) == (0, len(ids), 0)
    assert not Dialogue.objects.filter(audit=audit).exclude(status=Dialogue.Status.PENDING).exists()
    assert Audit.objects.get(pk=audit.pk).status == Audit.Status.RUNNING
    assert Dialogue.objects.filter(audit=audit, lease_until__gt=timezone.now()).count() == 0
