"""The demographic design: default levels and names; explicit, implicit, opposite, intersectional specs; contrasts."""

from collections import Counter

import pytest

from audits.conditions import (
    CONTROL,
    DEFAULT_NAMES,
    ConditionChoice,
    analysis_design,
    build_conditions,
    default_levels,
    default_names,
    explicit_conditions,
    implicit_conditions,
    intersectional_conditions,
    opposite_conditions,
)
from audits.fairness import build_contrasts


def contrasts_of(specs):
    return build_contrasts(analysis_design({spec.key: spec for spec in specs}))


def test_defaults_are_nine_levels_over_four_dimensions():
    """docs/DOMAIN.md: gender (3), immigration (2), first language (2), SES (2), plus a no-cue control."""
    levels = default_levels()
    by_dimension = {}
    for level in levels:
        by_dimension.setdefault(level.dimension, []).append(level.key)
    assert by_dimension == {
        "gender": ["female", "male", "non_binary"],
        "immigration": ["native_born", "immigrant"],
        "first_language": ["english_l1", "non_english_l1"],
        "ses": ["lower_income", "higher_income"],
    }
    assert all(level.persona_statement and level.tutor_statement for level in levels)


def test_names_cover_at_least_four_ethnicities_by_two_genders_with_several_names():
    assert len(DEFAULT_NAMES) >= 4
    for by_gender in DEFAULT_NAMES.values():
        assert set(by_gender) == {"female", "male"}
        assert all(len(names) >= 3 for names in by_gender.values())
    names = [name.name for name in default_names()]
    assert len(names) == len(set(names)), "a name must connote one cell only"


def test_explicit_conditions_carry_the_statement_and_nothing_for_the_tutor():
    specs = explicit_conditions(default_levels(), ["first_language"])
    assert [spec.key for spec in specs] == [
        "explicit/first_language=english_l1",
        "explicit/first_language=non_english_l1",
    ]
    assert "English is not my first language" in specs[1].persona_cue
    assert specs[1].tutor_cue == "" and not specs[1].tutor_informed


def test_implicit_conditions_are_names_and_can_be_subsampled_with_a_seed():
    everyone = implicit_conditions(default_names())
    assert len(everyone) == len(default_names())
    assert all(spec.name_cue in spec.persona_cue and spec.tutor_cue == "" for spec in everyone)
    two = implicit_conditions(default_names(), names_per_cell=2, seed=5)
    cells = {(spec.name_gender, spec.name_ethnicity) for spec in everyone}
    assert len(two) == 2 * len(cells)
    assert two == implicit_conditions(default_names(), names_per_cell=2, seed=5)
    told = implicit_conditions(default_names()[:1], tell_tutor=True)[0]
    assert told.tutor_cue == f"The student's name is {told.name_cue}." and told.tutor_informed


def test_opposite_is_a_two_by_two_of_stated_and_perceived_gender():
    specs = opposite_conditions(default_levels())
    cells = {(spec.stated_gender, spec.perceived_gender) for spec in specs}
    assert cells == {("female", "female"), ("female", "male"), ("male", "female"), ("male", "male")}
    mismatched = next(spec for spec in specs if (spec.stated_gender, spec.perceived_gender) == ("female", "male"))
    assert "I'm a girl." in mismatched.persona_cue
    assert mismatched.tutor_cue == "The student you are tutoring is a boy."


def test_intersectional_conditions_combine_levels_of_several_dimensions():
    specs = intersectional_conditions(default_levels(), ["gender", "first_language"])
    assert len(specs) == 3 * 2
    combo = next(spec for spec in specs if spec.key == "explicit/gender=female+first_language=non_english_l1")
    assert combo.is_intersectional and combo.dimension == "gender+first_language"
    assert "I'm a girl. English is not my first language" in combo.persona_cue
    contrasts = contrasts_of(specs)
    assert {c.dimension for c in contrasts} == {"gender+first_language"}
    assert len(contrasts) == 6 * 5 // 2  # every two combinations can be compared (no control here)
    female_other = next(c for c in contrasts if c.level_b == "female+non_english_l1")
    assert female_other.side_b == (("explicit/gender=female+first_language=non_english_l1",),)
    with pytest.raises(ValueError, match="no levels"):
        intersectional_conditions(default_levels(), ["gender", "religion"])


def test_contrasts_of_the_paper_design():
    conditions = build_conditions(
        ConditionChoice(explicit_dimensions=("gender", "immigration", "first_language", "ses"), implicit=True,
                        opposite=True),
        default_levels(),
        default_names(),
    )  # fmt: skip
    contrasts = contrasts_of(conditions)
    rows = Counter((c.kind, c.family, c.dimension if c.kind != "explicit" else "") for c in contrasts)
    # Explicit: each of the 9 levels against control, plus level pairs within a dimension (3 + 1 + 1 + 1).
    assert rows["explicit", "vs_control", ""] == 9
    assert rows["explicit", "within", ""] == 6
    # Implicit name cells (gender × ethnicity), paired within a question: gender = same ethnicity,
    # ethnicity = same gender, both = both differ.
    groups = len(DEFAULT_NAMES)
    assert rows["implicit", "names", "gender"] == groups
    assert rows["implicit", "names", "ethnicity"] == 2 * groups * (groups - 1) // 2
    assert rows["implicit", "names", "both"] == groups * (groups - 1)
    gender_row = next(c for c in contrasts if c.kind == "implicit" and c.dimension == "gender")
    (cell_a,), (cell_b,) = gender_row.side_a, gender_row.side_b
    assert len(cell_a) == len(cell_b) == 4  # the four names of one cell are averaged per question
    # Opposite: genders in the design's order (female, male); B is the second perceived gender.
    opposite = {c.dimension: c for c in contrasts if c.kind == "opposite"}
    assert list(opposite) == ["correct_gap", "wrong_gap", "tutor_effect", "simulator_effect", "interaction"]
    assert opposite["correct_gap"].side_a == (("opposite/stated=female/perceived=female",),)
    assert opposite["correct_gap"].side_b == (("opposite/stated=male/perceived=male",),)
    assert opposite["wrong_gap"].side_b == (("opposite/stated=female/perceived=male",),)
    assert conditions[0].kind == CONTROL


def test_build_refuses_duplicate_conditions():
    with pytest.raises(ValueError, match="defined twice"):
        build_conditions(
            ConditionChoice(explicit_dimensions=("gender",)),
            default_levels() + default_levels()[:1],
            [],
        )
