"""Small builders the engine's tests share: questions, endpoints, an audit with real conditions.

Not a test module; imported by test_audit_*.py, test_engine_*.py and the benchmark.
"""

from __future__ import annotations

from audits.conditions import ConditionChoice, build_conditions, default_levels, default_names
from audits.models import ModelEndpoint, Question

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


def simulation_endpoint(name: str, *, bias=None, seed: int = 0) -> ModelEndpoint:
    return ModelEndpoint.objects.create(
        name=name,
        provider=ModelEndpoint.Provider.SIMULATION,
        model=name,
        simulation_config={"seed": seed, "bias": bias or []},
    )


def openai_endpoint(name: str, base_url: str, *, api_key_env: str = "", **fields) -> ModelEndpoint:
    return ModelEndpoint.objects.create(
        name=name,
        provider=ModelEndpoint.Provider.OPENAI,
        model="test-model",
        base_url=base_url,
        api_key_env=api_key_env,
        **fields,
    )


def explicit_conditions(dimensions=("first_language",), control: bool = True):
    return build_conditions(
        ConditionChoice(control=control, explicit_dimensions=tuple(dimensions)), default_levels(), default_names()
    )
