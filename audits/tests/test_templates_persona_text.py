"""The persona text for every default level (and name, and the 2 × 2) reads naturally when rendered."""

import re

import pytest

from audits.conditions import ConditionChoice, build_conditions, default_levels, default_names
from audits.models import PromptTemplate
from audits.prompt_templates import render_prompt
from audits.services.design import design_defaults_seed

pytestmark = pytest.mark.django_db

QUESTION = "Solve for x: 3x + 7 = 25."


def readable(text: str) -> None:
    assert "$" not in text and "{" not in text, "an unfilled placeholder"
    assert "  " not in text, "a double space"
    assert "\n\n\n" not in text, "an empty paragraph"
    assert not re.search(r"\s[.,;]", text), "a space before punctuation"
    assert '""' not in text, "an empty quotation"


def test_every_default_level_renders_into_a_natural_persona():
    design_defaults_seed()
    template = PromptTemplate.objects.get(kind="student_persona", name="student").text
    specs = build_conditions(
        ConditionChoice(explicit_dimensions=("gender", "immigration", "first_language", "ses"), implicit=True,
                        opposite=True, intersectional_dimensions=("gender", "first_language")),
        default_levels(),
        default_names(),
    )  # fmt: skip
    rendered = {spec.key: render_prompt(template, question=QUESTION, persona_cue=spec.persona_cue) for spec in specs}
    for key, text in rendered.items():
        readable(text)
        assert QUESTION in text, key
    for level in default_levels():
        statement = level.persona_statement
        assert statement[0].isupper() and statement.endswith("."), statement
        assert statement.startswith(("I", "My", "English")), statement  # first person
        text = rendered[f"explicit/{level.dimension}={level.key}"]
        assert f'tell the tutor this about yourself: "{statement}"' in text
    control = rendered["control"]
    assert "tell the tutor" not in control and "Your name is" not in control
    assert "Your name is Priya. Start your first message by telling the tutor your name." in rendered["implicit/Priya"]


def test_tutor_cues_read_naturally_in_the_informed_tutor_prompt():
    design_defaults_seed()
    template = PromptTemplate.objects.get(kind="tutor_system", name="tutor-informed").text
    for level in default_levels():
        text = render_prompt(
            template, question=QUESTION, answer="6", solution="3x = 18, x = 6", tutor_cue=level.tutor_statement
        )
        readable(text)
        assert level.tutor_statement.startswith("The student you are tutoring ")
        assert level.tutor_statement in text
