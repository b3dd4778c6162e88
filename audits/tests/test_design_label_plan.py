"""The design preview's label plan: human-labelled turns per stratum for a judge-corrected reading of a design.

Per metric, `judge_corrected.labels_needed` with one stratum per side (λ = 1), times the design's strata (tutors ×
domains × conditions), times the validation stage's three annotators; the error SD typed, or measured by the judge
endpoint's newest recorded validation (built as the judge-validation planner's test builds it), or neither — and
then the page says how to get one.
"""

import numpy as np
import pytest
from django.urls import reverse

from annotation.judge_validation.services import DEFAULT_OVERLAP, validation_project_create, validation_record
from annotation.selectors.judge_validation import sampled_items, validation_stage
from annotation.services.labelling import label_next, main_label_submit
from annotation.tests.judge_validation_setup import passed_annotators, run_simulation_audit
from annotation.workflow.answers import Answer
from audits.conditions import control_condition, default_levels, explicit_conditions
from audits.design import CallBudget, QuestionSelection, TutorPlan, preview_design
from audits.design_label_plan import LABEL_PLAN_HALF_WIDTH, VALIDATION_OVERLAP, design_label_plan, design_strata
from audits.judge import METRICS
from audits.judge_corrected import labels_needed
from audits.models import TurnScore
from audits.selectors.judge_validation import judge_error_sds
from audits.tests.engine_factories import make_questions, simulation_endpoint

QUERY = {
    "domains": ["mathematics", "physics"],
    "mode": "all",
    "seed": 0,
    "tutors": 2,
    "subsampled_tutors": 0,
    "control": "on",
    "explicit_dimensions": ["gender"],
    "t_max": 10,
    "judge_attempts": 1,
}


def _preview():
    return preview_design(
        {"mathematics": list(range(1, 21)), "physics": list(range(21, 31)), "chemistry": []},
        QuestionSelection(domains=("mathematics", "physics", "chemistry")),
        [TutorPlan("a"), TutorPlan("b"), TutorPlan("c", fraction=0.5)],
        [control_condition(), *explicit_conditions(default_levels())],
        budget=CallBudget(t_max=4),
    )


def test_the_plan_is_labels_needed_per_stratum_times_the_designs_strata_and_annotators():
    preview = _preview()
    # Three tutors in the two domains that have questions (chemistry has none), ten conditions.
    assert preview.conditions == 10 and design_strata(preview) == 3 * 2 * 10
    plan = design_label_plan(preview, {"a_metric": 0.6, "b_metric": 0.2, "unmeasured": None}, target_half_width=0.3)
    assert plan.strata == 60 and plan.overlap == VALIDATION_OVERLAP == DEFAULT_OVERLAP == 3
    assert plan.target_half_width == 0.3 and plan.alpha == 0.05 and plan.level_percent == "95"
    for row, sd in zip(plan.rows[:2], (0.6, 0.2), strict=True):
        expected = labels_needed(sd, sd, 0.3, strata_a=1, strata_b=1)
        assert row.error_sd == sd and row.per_stratum == expected.per_side == expected.per_stratum_a
        assert row.turns == expected.per_side * 60 and row.labels == expected.per_side * 60 * 3
        assert row.predicted_half_width == pytest.approx(expected.predicted_half_width, rel=1e-12)
    assert plan.rows[2].per_stratum is None and plan.rows[2].turns is None
    assert plan.all_metrics_row.metric == "a_metric"
    # The smallest stratum: the subsampled tutor's 5 physics questions × T_max 4.
    assert plan.smallest_stratum_turns == 20
    assert plan.rows[0].exceeds_smallest_stratum == (plan.rows[0].per_stratum > 20)
    assert "λ = 1" in plan.assumptions and "independent" in plan.assumptions and "judge mean" in plan.assumptions
    assert design_label_plan(preview, {"m": 0.6}).target_half_width == LABEL_PLAN_HALF_WIDTH


@pytest.mark.django_db
def test_the_preview_page_plans_with_a_typed_sd_and_says_how_to_get_one_without(researcher_client):
    make_questions(6, "mathematics", prefix="plan")
    make_questions(4, "physics", prefix="plan")
    judge = simulation_endpoint("plan judge")
    url = reverse("audits:design-preview")
    response = researcher_client.get(
        url, {**QUERY, "judge_endpoint": judge.pk, "target_half_width": "0.3", "judge_error_sd": "0.5"}
    )
    assert response.status_code == 200
    preview, shown = response.context["preview"], response.context["label_plan"]
    strata = 2 * 2 * preview.conditions
    expected = labels_needed(0.5, 0.5, 0.3)
    assert shown.source == "typed" and shown.measured is None
    [row] = shown.plan.rows
    assert shown.plan.strata == strata and row.per_stratum == expected.per_side
    assert row.turns == expected.per_side * strata and row.labels == expected.per_side * strata * 3
    html = response.content.decode()
    assert f"data-per-stratum>{expected.per_side:,}<" in html
    assert f"data-labels>{expected.per_side * strata * 3:,}<" in html and "λ = 1" in html
    assert "has no recorded judge validation" in html

    blank = researcher_client.get(url, {**QUERY, "judge_endpoint": judge.pk})
    assert blank.context["label_plan"].source == "none" and blank.context["label_plan"].plan is None
    page = blank.content.decode()
    assert 'id="label-plan-no-sd"' in page and reverse("annotation:judge-validation-create") in page
    assert blank.context["preview"].dialogues == preview.dialogues

    bad = researcher_client.get(url, {**QUERY, "target_half_width": "5"})
    assert bad.status_code == 200 and bad.context["preview"] is not None and bad.context["label_plan"] is None
    assert "Target CI half-width" in bad.content.decode()


@pytest.mark.django_db
def test_a_recorded_validation_gives_the_sd_per_metric_on_the_preview_and_the_launch_form(
    researcher_client, researcher, make_user
):
    audit = run_simulation_audit("design plan audit", questions=2)
    project = validation_project_create(audit=audit, per_stratum=4, seed=2, training_pool=4, by=researcher)
    stage = validation_stage(project)
    items = list(sampled_items(project))
    judge = {
        (row["turn_id"], row["metric"]): row["value"]
        for row in TurnScore.objects.filter(
            turn_id__in=[i.source_turn_id for i in items], rubric_id=audit.judge_template_id
        ).values("turn_id", "metric", "value")
    }

    def human(turn: int, metric: str) -> str:
        # The humans say 1 wherever the judge found the metric applicable: the judge's error is its score − 1.
        return "n/a" if judge[(turn, metric)] == -1 else "1"

    for user in passed_annotators(stage, make_user):
        while (assignment := label_next(annotator=user, stage=stage)) is not None:
            turn = assignment.item.source_turn_id
            answers = {m: Answer(value=human(turn, m)) for m in METRICS}
            main_label_submit(annotator=user, stage=stage, item=assignment.item, answers=answers)
    [validation] = project.judge_validations.all()
    validation_record(validation=validation, by=researcher)

    expected_sd = {}
    for metric in METRICS:
        errors = [judge[(i.source_turn_id, metric)] - 1 for i in items if judge[(i.source_turn_id, metric)] != -1]
        expected_sd[metric] = (len(errors), float(np.std(errors, ddof=1)) if len(errors) >= 2 else None)
    measured = judge_error_sds(audit.judge_endpoint_id)
    assert measured.validation_id == validation.pk and measured.project_id == project.pk
    for metric, (n, sd) in expected_sd.items():
        assert measured.n_pairs[metric] == n
        assert measured.sds[metric] == (pytest.approx(sd, rel=1e-12) if sd is not None else None)
    assert judge_error_sds(audit.judge_endpoint_id + 1000) is None

    response = researcher_client.get(
        reverse("audits:design-preview"),
        {**QUERY, "judge_endpoint": audit.judge_endpoint_id, "target_half_width": "0.4"},
    )
    shown = response.context["label_plan"]
    assert shown.source == "validation" and shown.measured.validation_id == validation.pk
    strata = design_strata(response.context["preview"])
    by_metric = {row.metric: row for row in shown.plan.rows}
    assert set(by_metric) == set(METRICS)
    planned = []
    for metric, (n, sd) in expected_sd.items():
        row = by_metric[metric]
        assert row.n_pairs == n
        if sd is None:
            assert row.per_stratum is None
            continue
        plan = labels_needed(sd, sd, 0.4, strata_a=1, strata_b=1)
        assert row.per_stratum == plan.per_side and row.turns == plan.per_side * strata
        assert row.labels == plan.per_side * strata * 3
        planned.append(row.per_stratum)
    assert planned and shown.plan.all_metrics_row.per_stratum == max(planned)
    html = response.content.decode()
    assert f"validation #{validation.pk}" in html and reverse("annotation:judge-validation", args=[project.pk]) in html

    # The launch form's preview: the same plan for the judge chosen there.
    tutor, student = simulation_endpoint("design plan tutor"), simulation_endpoint("design plan student")
    launch = researcher_client.post(
        reverse("audits:audit-new-preview"),
        {
            "name": "planned audit",
            "tutors": [tutor.pk],
            "student_endpoint": student.pk,
            "judge_endpoint": audit.judge_endpoint_id,
            "domains": ["mathematics", "physics"],
            "seed": 0,
            "control": "on",
            "explicit_dimensions": ["gender"],
            "t_max": 10,
            "max_reasks": 0,
            "target_half_width": "0.4",
        },
    )
    on_launch = launch.context["label_plan"]
    assert on_launch.source == "validation" and on_launch.measured.validation_id == validation.pk
    launch_strata = design_strata(launch.context["preview"])
    for row in on_launch.plan.rows:
        if row.per_stratum is not None:
            assert row.per_stratum == by_metric[row.metric].per_stratum and row.turns == row.per_stratum * launch_strata
    assert 'id="label-plan-table"' in launch.content.decode()
