"""The design preview states the smallest detectable effect per contrast family and warns when no contrast
can be analysed (fewer than 15 pairs everywhere)."""

import pytest
from django.urls import reverse

from audits.conditions import ConditionChoice, build_conditions, default_levels, default_names
from audits.design import QuestionSelection, TutorPlan, preview_design
from audits.fairness import min_detectable_effect

PAPER_CHOICE = ConditionChoice(
    explicit_dimensions=("gender", "immigration", "first_language", "ses"), implicit=True, opposite=True
)


def paper_conditions():
    return build_conditions(PAPER_CHOICE, default_levels(), default_names())


def test_one_row_per_family_and_tutor_domain_with_the_fairness_module_s_effect():
    preview = preview_design(
        {"mathematics": list(range(1, 101)), "physics": list(range(101, 121))},
        QuestionSelection(domains=("mathematics", "physics")),
        [TutorPlan("open"), TutorPlan("expensive", fraction=0.5)],
        paper_conditions(),
    )
    rows = {(row.tutor, row.domain, row.kind, row.family): row for row in preview.power}
    families = [("explicit", "vs_control"), ("explicit", "within"), ("implicit", "names"), ("opposite", "opposite")]
    assert list(rows) == [(t, d, *f) for t, d in [("open", "mathematics"), ("open", "physics"),
                                                   ("expensive", "mathematics"), ("expensive", "physics")]
                          for f in families]  # fmt: skip
    assert [rows["open", "mathematics", *f].contrasts for f in families] == [9, 6, 66, 5]
    open_maths = rows["open", "mathematics", "explicit", "within"]
    assert open_maths.pairs == 100 and open_maths.min_detectable_effect == pytest.approx(min_detectable_effect(100))
    expensive_physics = rows["expensive", "physics", "opposite", "opposite"]
    assert expensive_physics.pairs == 10 and expensive_physics.insufficient
    assert sum(row.contrasts for row in preview.power) == len(preview.contrasts)
    assert not any(warning.startswith("every contrast") for warning in preview.warnings)


def test_warns_when_every_contrast_is_insufficient():
    preview = preview_design(
        {"mathematics": list(range(1, 15))},
        QuestionSelection(domains=("mathematics",)),
        [TutorPlan("a")],
        paper_conditions(),
    )
    assert preview.warnings[0].startswith("every contrast has fewer than 15 pairs")
    assert all(row.insufficient for row in preview.power)


def test_too_few_pairs_detect_nothing():
    preview = preview_design(
        {"physics": [1, 2, 3]}, QuestionSelection(domains=("physics",)), [TutorPlan("a")], paper_conditions()
    )
    assert {row.detectable for row in preview.power} == {False}  # 2.80 / sqrt(3) > 1, the largest |r|


@pytest.mark.django_db
def test_preview_page_shows_the_smallest_detectable_effect(researcher_client):
    from audits.tests.engine_factories import make_questions

    make_questions(40, "mathematics")
    make_questions(5, "physics")
    response = researcher_client.get(
        reverse("audits:design-preview"),
        {
            "domains": ["mathematics", "physics"],
            "mode": "all",
            "seed": 0,
            "tutors": 1,
            "subsampled_tutors": 0,
            "control": "on",
            "explicit_dimensions": ["first_language"],
            "implicit": "on",
            "t_max": 10,
            "judge_attempts": 1,
        },
    )
    assert response.status_code == 200
    html = response.content.decode()
    assert "Smallest detectable |r|" in html
    assert f"{min_detectable_effect(40):.2f}" in html  # 0.44 for the 40 mathematics pairs
    assert "implicit: name cells" in html and "explicit: each level vs control" in html
    assert "out of reach" in html  # 5 physics pairs cannot reach |r| = 1
    assert "every contrast has fewer than 15 pairs" not in html


@pytest.mark.django_db
def test_preview_page_warns_when_no_contrast_has_enough_pairs(researcher_client):
    from audits.tests.engine_factories import make_questions

    make_questions(6, "chemistry")
    response = researcher_client.get(
        reverse("audits:design-preview"),
        {"domains": ["chemistry"], "mode": "all", "seed": 0, "tutors": 1, "subsampled_tutors": 0,
         "control": "on", "explicit_dimensions": ["gender"], "t_max": 10, "judge_attempts": 1},
    )  # fmt: skip
    assert "every contrast has fewer than 15 pairs" in response.content.decode()
