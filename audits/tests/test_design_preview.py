"""Audit design preview: counts checked against hand computations and the paper's 30% subsample."""

import pytest
from django.urls import reverse

from audits.conditions import (
    ConditionChoice,
    build_conditions,
    control_condition,
    default_levels,
    default_names,
    explicit_conditions,
)
from audits.design import CallBudget, QuestionSelection, TutorPlan, preview_design, stratified_subsample, subsample_size

DOMAINS = ("mathematics", "physics", "chemistry")


def bank(sizes: dict[str, int]) -> dict[str, list[int]]:
    ids, start = {}, 1
    for domain, size in sizes.items():
        ids[domain] = list(range(start, start + size))
        start += size
    return ids


def explicit_with_control():
    return [control_condition(), *explicit_conditions(default_levels())]


def test_hand_computation_three_domains_twenty_questions_two_tutors_ten_conditions():
    ids = bank({"mathematics": 50, "physics": 40, "chemistry": 30})
    preview = preview_design(
        ids,
        QuestionSelection(domains=DOMAINS, count=20, seed=1),
        [TutorPlan("a"), TutorPlan("b")],
        explicit_with_control(),
        budget=CallBudget(t_max=10, judge_attempts=1),
    )
    assert preview.conditions == 9 + 1
    assert preview.selected == {"mathematics": 20, "physics": 20, "chemistry": 20}
    assert preview.dialogues == 3 * 20 * 2 * 10 == 1200
    # Per dialogue at most 10 tutor + 10 student + 10 judge + 10 reveal-check calls.
    assert preview.calls == {
        "tutor": 12_000,
        "student": 12_000,
        "judge": 12_000,
        "reveal_check": 12_000,
        "total": 48_000,
    }
    # Explicit contrasts per (tutor, domain): 3 + 1 + 1 + 1 level pairs and 9 against control = 15, each with 20 pairs.
    assert len(preview.contrasts) == 2 * 3 * 15
    assert {row.pairs for row in preview.contrasts} == {20}
    assert preview.warnings == [] and preview.insufficient_contrasts == []


def test_judge_re_asks_widen_the_bound():
    preview = preview_design(
        bank({"physics": 10}), QuestionSelection(domains=("physics",)), [TutorPlan("a")], [control_condition()],
        budget=CallBudget(t_max=7, judge_attempts=3),
    )  # fmt: skip
    assert preview.dialogues == 10
    assert preview.calls["total"] == 10 * 7 * (1 + 1 + 3 + 1)


def test_paper_subsample_for_an_expensive_tutor():
    """EduFair-Bench ran GPT-5-mini on a stratified 30% per domain: 272 / 150 / 150 of 907 / 500 / 500."""
    ids = bank({"mathematics": 907, "physics": 500, "chemistry": 500})
    preview = preview_design(
        ids,
        QuestionSelection(domains=DOMAINS, seed=0),
        [TutorPlan("open-weight"), TutorPlan("gpt-5-mini", fraction=0.3)],
        explicit_with_control(),
    )
    rows = {row.label: row for row in preview.tutors}
    assert rows["gpt-5-mini"].questions == {"mathematics": 272, "physics": 150, "chemistry": 150}
    assert rows["open-weight"].dialogues == (907 + 500 + 500) * 10
    expensive = preview.question_ids["gpt-5-mini"]
    assert set(expensive["physics"]) <= set(preview.question_ids["open-weight"]["physics"])
    assert subsample_size(907, fraction=0.3) == 272


def test_subsample_is_stratified_and_seeded():
    ids = bank({"mathematics": 100, "physics": 60})
    first = stratified_subsample(ids, fraction=0.5, seed=3)
    assert {d: len(v) for d, v in first.items()} == {"mathematics": 50, "physics": 30}
    assert first == stratified_subsample(ids, fraction=0.5, seed=3)
    assert first != stratified_subsample(ids, fraction=0.5, seed=4)
    # Adding a domain does not change another domain's sample.
    more = stratified_subsample({**ids, "chemistry": list(range(500, 540))}, fraction=0.5, seed=3)
    assert more["physics"] == first["physics"]


def test_warning_under_fifteen_pairs():
    preview = preview_design(
        bank({"mathematics": 100, "chemistry": 14}),
        QuestionSelection(domains=("mathematics", "chemistry"), count=40),
        [TutorPlan("a")],
        explicit_with_control(),
    )
    assert [row.pairs for row in preview.contrasts if row.domain == "chemistry"][0] == 14
    assert len(preview.insufficient_contrasts) == 15
    assert any("chemistry" in warning and "fewer than 15" in warning for warning in preview.warnings)


def test_implicit_and_opposite_count_as_conditions():
    conditions = build_conditions(
        ConditionChoice(control=False, implicit=True, names_per_cell=2, opposite=True),
        default_levels(),
        default_names(),
    )
    preview = preview_design(
        bank({"physics": 20}), QuestionSelection(domains=("physics",)), [TutorPlan("a")], conditions
    )
    cells = len({(n.gender, n.ethnicity) for n in default_names()})
    assert preview.conditions == 2 * cells + 4
    assert preview.dialogues == 20 * (2 * cells + 4)


@pytest.mark.django_db
def test_preview_page(researcher_client):
    from audits.services.design import design_defaults_seed
    from audits.services.questionbank import question_import_from_path
    from audits.tests.questionbank_files import SAMPLES

    design_defaults_seed()
    question_import_from_path(source="jsonl", path=SAMPLES / "generic_sample.jsonl")
    response = researcher_client.get(
        reverse("audits:design-preview"),
        {
            "domains": ["mathematics", "physics", "chemistry"],
            "mode": "all",
            "seed": 0,
            "tutors": 2,
            "subsampled_tutors": 0,
            "control": "on",
            "explicit_dimensions": ["gender", "immigration", "first_language", "ses"],
            "implicit_rows": ["gender"],
            "t_max": 10,
            "judge_attempts": 1,
        },
    )
    assert response.status_code == 200
    preview = response.context["preview"]
    assert preview.dialogues == 8 * 2 * 10  # the sample has 3 + 2 + 3 questions
    html = response.content.decode()
    assert 'id="preview-dialogues">160<' in html
    assert "fewer than 15" in html
    assert researcher_client.get(reverse("audits:design-preview")).status_code == 200
