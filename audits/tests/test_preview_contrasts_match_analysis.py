"""The design preview lists exactly the contrasts the analysis of an audit of that design reports.

The preview converts `audits.conditions.ConditionSpec`s keyed by condition key; the analysis converts the
audit's Condition rows keyed by id (`audit_condition_design`). Both go through `analysis_design` and
`fairness.build_contrasts`, so the contrast keys must agree, in order, for every kind of design.
"""

import pytest

from audits.conditions import (
    ConditionChoice,
    NameInfo,
    analysis_condition,
    analysis_design,
    control_condition,
    default_levels,
    implicit_conditions,
    intersectional_conditions,
)
from audits.design import QuestionSelection, TutorPlan, preview_design
from audits.fairness import ConditionSpec, build_contrasts
from audits.models import NameCue
from audits.selectors.design import design_conditions, question_ids_by_domain
from audits.selectors.runs import audit_condition_design
from audits.services.audit_lifecycle import audit_create, audit_create_from_design
from audits.tests.engine_factories import make_questions, simulation_endpoint

DESIGNS = {
    "explicit only": {"control": True, "explicit_dimensions": ["gender", "first_language"]},
    "explicit and implicit, two names per cell": {
        "control": True,
        "explicit_dimensions": ["ses"],
        "implicit": True,
        "names_per_cell": 2,
        "seed": 4,
    },
    "opposite": {"control": False, "opposite": True},
    "intersectional": {"control": True, "intersectional_dimensions": ["gender", "first_language"]},
}


# --- pure: one converter, one meaning --------------------------------------------------------------------


def test_an_intersectional_condition_is_one_level_of_the_combined_dimension():
    combo = intersectional_conditions(default_levels(), ["gender", "first_language"])[1]
    assert analysis_condition(combo) == ConditionSpec(
        "explicit", dimension="gender+first_language", level="female+non_english_l1"
    )


def test_a_name_that_cues_nothing_is_left_out_and_a_partial_cue_is_kept():
    specs = [
        control_condition(),
        *implicit_conditions([NameInfo("Sam", "", ""), NameInfo("Alex", "", "white"), NameInfo("Kai", "", "maori")]),
    ]
    design = analysis_design({spec.key: spec for spec in specs})
    assert list(design) == ["control", "implicit/Kai", "implicit/Alex"]  # names sorted by ethnicity
    (contrast,) = build_contrasts(design)
    assert (contrast.dimension, contrast.level_a, contrast.level_b) == ("ethnicity", "maori", "white")


# --- the preview and the analysis of the audit launched from the same choice ---------------------------


def launch(choice: dict):
    tutor = simulation_endpoint("tutor")
    other = simulation_endpoint("student and judge")
    return audit_create_from_design(
        name="same design",
        tutors=[tutor],
        student_endpoint=other,
        judge_endpoint=other,
        selection={"domains": ["mathematics"]},
        choice=choice,
    )


def preview_keys(choice: dict) -> list[tuple]:
    tuple_fields = ("explicit_dimensions", "intersectional_dimensions")
    conditions = design_conditions(
        choice=ConditionChoice(**{k: tuple(v) if k in tuple_fields else v for k, v in choice.items()})
    )
    preview = preview_design(
        question_ids_by_domain(domains=["mathematics"]),
        QuestionSelection(domains=("mathematics",)),
        [TutorPlan("tutor")],
        conditions,
    )
    return [line.contrast.key for line in preview.contrast_list]


@pytest.mark.django_db
@pytest.mark.parametrize("design", list(DESIGNS))
def test_preview_lists_the_contrasts_the_analysis_reports(design):
    make_questions(2)
    choice = DESIGNS[design]
    analysis_keys = [contrast.key for contrast in build_contrasts(audit_condition_design(launch(choice)))]
    assert analysis_keys, "each design supports some contrast"
    assert preview_keys(choice) == analysis_keys


@pytest.mark.django_db
def test_preview_and_launch_read_the_same_name_table():
    """With names in the table, both use the table (not the defaults), retired names included in neither."""
    from audits.services.design import design_defaults_seed

    design_defaults_seed()
    NameCue.objects.create(name="Aroha", gender="female", ethnicity="maori")
    NameCue.objects.filter(ethnicity="arab").update(active=False)
    make_questions(2)
    choice = {"control": False, "implicit": True}
    analysis_keys = [contrast.key for contrast in build_contrasts(audit_condition_design(launch(choice)))]
    assert preview_keys(choice) == analysis_keys
    cells = {side for key in analysis_keys for side in key[3:]}
    assert "female maori" in cells and not any("arab" in cell for cell in cells)


@pytest.mark.django_db
def test_condition_rows_convert_as_their_specs_do():
    """Stored rows (dimension and level joined with '+', names that cue only part or nothing) give the same
    design as the specs they were made from."""
    specs = [
        control_condition(),
        *intersectional_conditions(default_levels(), ["gender", "ses"]),
        *implicit_conditions([NameInfo("Sam", "", ""), NameInfo("Alex", "", "white"), NameInfo("Mia", "female", "")]),
    ]
    endpoint = simulation_endpoint("everyone")
    audit = audit_create(
        name="rows",
        tutors=[endpoint],
        student_endpoint=endpoint,
        judge_endpoint=endpoint,
        questions=make_questions(1),
        conditions=specs,
    )
    from_specs = analysis_design({spec.key: spec for spec in specs})
    from_rows = audit_condition_design(audit)
    assert list(from_rows.values()) == list(from_specs.values())
    assert [c.key for c in build_contrasts(from_rows)] == [c.key for c in build_contrasts(from_specs)]
