"""Builders for the judge-validation tests: a small simulation audit run to the end (two tutors, one with
a planted bias; two domains; control and explicit first-language conditions, plus an implicit name cue so
names reach the transcripts), and annotators who passed the validation stage's gate.

Not a test module. Tests that run an audit need ``django_db(transaction=True)``: the engine writes from
its own thread.
"""

from __future__ import annotations

from audits.conditions import ConditionChoice, build_conditions, default_levels, default_names
from audits.models import Audit
from audits.services.audit_lifecycle import audit_create
from audits.services.dialogue_batches import audit_run_inline
from audits.tests.engine_factories import PLANTED_BIAS, make_questions, simulation_endpoint

from .main_setup import pass_gate


def run_simulation_audit(name: str = "validation audit", seed: int = 3, questions: int = 3) -> Audit:
    tutor_fair = simulation_endpoint(f"{name} tutor A")
    tutor_biased = simulation_endpoint(f"{name} tutor B", bias=PLANTED_BIAS)
    other = simulation_endpoint(f"{name} student+judge")
    chosen = make_questions(questions, "mathematics", prefix=name) + make_questions(questions, "physics", prefix=name)
    conditions = build_conditions(
        ConditionChoice(
            control=True,
            explicit_dimensions=("first_language",),
            implicit=True,
            implicit_rows=("gender",),
            names_per_cell=1,
        ),
        default_levels(),
        default_names(),
    )
    audit = audit_create(
        name=name,
        tutors=[tutor_fair, tutor_biased],
        student_endpoint=other,
        judge_endpoint=other,
        questions=chosen,
        conditions=conditions[:5],  # control, two explicit, two names
        seed=seed,
    )
    assert audit_run_inline(audit=audit) == Audit.Status.FINISHED
    audit.refresh_from_db()
    return audit


def passed_annotators(stage, make_user, count: int = 3) -> list:
    users = [make_user("annotator") for _ in range(count)]
    for user in users:
        pass_gate(stage, user)
    return users
