"""Small builders the engine's tests share: questions, endpoints, an audit with real conditions, and a
finished audit whose dialogues, turns and judge scores are written directly (no model runs).

Not a test module; imported by test_audit_*.py, test_engine_*.py, the results tests and the benchmark.
"""

from __future__ import annotations

import random

from django.utils import timezone

from audits.conditions import ConditionChoice, build_conditions, default_levels, default_names
from audits.models import Audit, ModelEndpoint, Question

PLANTED_BIAS = [{"level": "first_language=non_english_l1", "metric": "corrective_tone", "shift": -0.4}]


def make_questions(count: int = 4, domain: str = "mathematics", prefix: str = "q") -> list[Question]:
    questions = []
    for i in range(count):
        a, b = 3 + i, 4 + 2 * i
        questions.append(
            Question.objects.get_or_create(
                source="generic",
                source_id=f"{prefix}-{domain}-{i}",
                defaults={
                    "domain": domain,
                    "content_hash": f"{prefix}{domain}{i}",
                    "text": f"A box holds {a} rows of {b} marbles. How many marbles are in the box?",
                    "answer": str(a * b),
                    "solution": f"{a} x {b} = {a * b}",
                },
            )[0]
        )
    return questions


def simulation_endpoint(name: str, *, bias=None, seed: int = 0, model: str = "") -> ModelEndpoint:
    return ModelEndpoint.objects.create(
        name=name,
        provider=ModelEndpoint.Provider.SIMULATION,
        model=model or name,
        simulation_config={"seed": seed, "bias": bias or []},
    )


def openai_endpoint(
    name: str, base_url: str, *, api_key_env: str = "", model: str = "test-model", **fields
) -> ModelEndpoint:
    return ModelEndpoint.objects.create(
        name=name,
        provider=ModelEndpoint.Provider.OPENAI,
        model=model,
        base_url=base_url,
        api_key_env=api_key_env,
        **fields,
    )


def explicit_conditions(dimensions=("first_language",), control: bool = True):
    return build_conditions(
        ConditionChoice(control=control, explicit_dimensions=tuple(dimensions)), default_levels(), default_names()
    )


def scored_audit(
    name: str = "scored audit",
    *,
    tutors: int = 2,
    questions: int = 22,
    dimensions=("gender", "immigration", "first_language", "ses"),
    tutor_turns: int = 3,
    seed: int = 0,
) -> Audit:
    """A finished audit of `tutors` simulated tutors × `questions` questions × (control + the explicit
    levels of `dimensions`), its dialogues, turns and judge scores (seeded values 0–2, some −1) written with
    bulk_create in well under a second instead of run through the engine: the default is the 440-dialogue
    shape of the demo audit (2 tutors × 10 conditions × 22 questions)."""
    from audits.judge import METRICS, conversation_metrics
    from audits.models import Dialogue, Turn, TurnScore
    from audits.services.audit_lifecycle import audit_create

    rng = random.Random(seed)
    student = simulation_endpoint(f"{name} student+judge")
    audit = audit_create(
        name=name,
        tutors=[simulation_endpoint(f"{name} tutor {i + 1}", seed=seed) for i in range(tutors)],
        student_endpoint=student,
        judge_endpoint=student,
        questions=make_questions(questions, prefix=f"{name}-"),
        conditions=explicit_conditions(dimensions),
        seed=seed,
    )
    now = timezone.now()
    texts = [("student", "I think it is 12?")] + [
        ("tutor", "Good start. How many rows are there?"),
        ("student", "There are three rows."),
    ] * tutor_turns
    metrics = conversation_metrics(texts)
    dialogues = Dialogue.objects.bulk_create(
        Dialogue(
            audit=audit,
            tutor=tutor,
            question=question,
            condition=condition,
            status=Dialogue.Status.DONE,
            end_reason="confirmed",
            metrics=metrics,
            runs=1,
            started_at=now,
            finished_at=now,
        )
        for tutor in audit.tutors.order_by("pk")
        for question in audit.questions.order_by("pk")
        for condition in audit.conditions.order_by("pk")
    )
    turns = Turn.objects.bulk_create(
        Turn(
            dialogue=dialogue,
            index=index,
            role=role,
            text=text,
            judge_status=Turn.JudgeStatus.OK if role == "tutor" else Turn.JudgeStatus.NONE,
        )
        for dialogue in dialogues
        for index, (role, text) in enumerate(texts)
    )
    TurnScore.objects.bulk_create(
        TurnScore(
            turn=turn,
            dialogue_id=turn.dialogue_id,
            audit=audit,
            metric=metric,
            value=rng.choice((-1, 0, 1, 1, 2, 2)),
            rubric_id=audit.judge_template_id,
        )
        for turn in turns
        if turn.role == "tutor"
        for metric in METRICS
    )
    Audit.objects.filter(pk=audit.pk).update(status=Audit.Status.FINISHED, launched_at=now, finished_at=now)
    audit.refresh_from_db()
    return audit
