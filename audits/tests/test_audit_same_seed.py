"""Acceptance 5: the same seed and the same simulation audit give identical transcripts and scores —
even with an empty ledger, so the simulation itself is what is deterministic, not the cache."""

import pytest

from audits.models import Audit, Dialogue, LLMCall, TurnScore
from audits.services.audit_lifecycle import audit_create
from audits.services.dialogue_batches import audit_run_inline
from audits.tests.engine_factories import PLANTED_BIAS, explicit_conditions, make_questions, simulation_endpoint

pytestmark = pytest.mark.django_db


def run(seed, endpoints, questions, name):
    tutor, other = endpoints
    audit = audit_create(
        name=name,
        tutors=[tutor],
        student_endpoint=other,
        judge_endpoint=other,
        questions=questions,
        conditions=explicit_conditions(("first_language", "gender")),
        seed=seed,
    )
    assert audit_run_inline(audit=audit) == Audit.Status.FINISHED
    return audit


def snapshot(audit):
    dialogues = []
    for d in Dialogue.objects.filter(audit=audit).select_related("condition").order_by("question_id", "condition__key"):
        turns = list(d.turns.order_by("index").values_list("role", "text"))
        scores = sorted(
            TurnScore.objects.filter(turn__dialogue=d).values_list("turn__index", "metric", "value", "status")
        )
        dialogues.append((d.question_id, d.condition.key, d.end_reason, turns, scores, d.metrics))
    return dialogues


def test_same_seed_same_transcripts_and_scores_from_an_empty_ledger():
    endpoints = (simulation_endpoint("sim-tutor", bias=PLANTED_BIAS), simulation_endpoint("sim-other"))
    questions = make_questions(4)
    first = snapshot(run(7, endpoints, questions, "first"))
    LLMCall.objects.all().delete()  # nothing can come from the cache now
    second = snapshot(run(7, endpoints, questions, "second"))
    assert first == second
    assert len(first) == 4 * 6 and all(turns for _, _, _, turns, _, _ in first)


def test_another_seed_gives_other_transcripts():
    endpoints = (simulation_endpoint("sim-tutor"), simulation_endpoint("sim-other"))
    questions = make_questions(4)
    first = snapshot(run(1, endpoints, questions, "seed 1"))
    second = snapshot(run(2, endpoints, questions, "seed 2"))
    differing = sum(a[3] != b[3] for a, b in zip(first, second, strict=True))
    assert differing >= len(first) // 2
