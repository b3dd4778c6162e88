"""The judge-validation report's label planner and cue check.

Per metric, the judge's error SD from the validation's (judge, consensus) pairs and the labels a judge-corrected
contrast needs for the researcher's target half-width (λ = 1, one stratum per side: a cell is one tutor × domain and
a side one condition, Kish's design effect from the recorded inclusion probabilities), on the page and in the JSON
report; and the contrasts where the judge errs differently on the two sides, as the audit's judge-corrected table
finds them."""

from collections import defaultdict

import numpy as np
import pytest
from django.urls import reverse

from annotation.judge_validation.cue_check import cue_section
from annotation.judge_validation.services import validation_project_create
from annotation.selectors.judge_validation import sampled_items, validation_stage
from annotation.services.labelling import label_next, main_label_submit
from annotation.workflow.answers import Answer
from audits.judge import METRICS
from audits.judge_corrected import labels_needed
from audits.models import Condition, TurnScore
from audits.services.judge_corrected import judge_corrected_results

from .judge_validation_setup import passed_annotators, run_simulation_audit

pytestmark = pytest.mark.django_db


def kish(probabilities: list[float]) -> float:
    weights = 1 / np.asarray(probabilities)
    return float(len(weights) * (weights**2).sum() / weights.sum() ** 2)


def test_planner_and_cue_check_on_the_report_page_and_in_the_json(researcher_client, researcher, make_user):
    audit = run_simulation_audit("planner audit", questions=2)
    project = validation_project_create(audit=audit, per_stratum=4, seed=2, training_pool=4, by=researcher)
    stage = validation_stage(project)
    items = list(sampled_items(project))
    control = set(Condition.objects.filter(audit=audit, kind="control").values_list("pk", flat=True))
    judge = {
        (row["turn_id"], row["metric"]): row["value"]
        for row in TurnScore.objects.filter(
            turn_id__in=[i.source_turn_id for i in items], rubric_id=audit.judge_template_id
        ).values("turn_id", "metric", "value")
    }
    condition_of = {i.source_turn_id: i.metadata["condition_id"] for i in items}

    def human(turn: int, metric: str) -> str:
        # The humans agree with the judge on the control turns and say 0 on every other turn: the judge's error
        # is 0 on one side of a control contrast and its score on the other.
        value = judge[(turn, metric)]
        if value == -1:
            return "n/a"
        return str(value) if condition_of[turn] in control else "0"

    for user in passed_annotators(stage, make_user):
        while (assignment := label_next(annotator=user, stage=stage)) is not None:
            turn = assignment.item.source_turn_id
            answers = {m: Answer(value=human(turn, m)) for m in METRICS}
            main_label_submit(annotator=user, stage=stage, item=assignment.item, answers=answers)

    # What the planner should say, computed here from the scores and the recorded probabilities.
    sides = defaultdict(list)
    for item in items:
        sides[(item.metadata["tutor_id"], item.metadata["condition_id"])].append(item.metadata["inclusion_probability"])
    design_effect = max(kish(found) for found in sides.values())
    domains = sorted({i.metadata["domain"] for i in items})
    expected = {}
    for metric in METRICS:
        pairs = [
            (judge[(i.source_turn_id, metric)], float(human(i.source_turn_id, metric)))
            for i in items
            if judge[(i.source_turn_id, metric)] != -1
        ]
        error = np.array([j - h for j, h in pairs], dtype=float)
        sd = float(np.std(error, ddof=1))
        expected[metric] = (
            len(pairs),
            sd,
            labels_needed(sd, sd, 0.4, strata_a=1, strata_b=1, design_effect=design_effect),
        )
    assert design_effect >= 1  # 1 here: every stratum of this audit holds as many turns

    url = reverse("annotation-jv-report", args=[project.pk])
    body = researcher_client.get(url, {"half_width": "0.4"}).json()
    planner = body["planner"]
    assert planner["target_half_width"] == 0.4 and planner["strata_per_side"] == 1 and len(domains) == 2
    assert planner["design_effect"] == pytest.approx(design_effect, rel=1e-12)
    assert "λ = 1" in planner["assumptions"] and "independent" in planner["assumptions"]
    by_metric = {row["metric"]: row for row in planner["rows"]}
    assert set(by_metric) == set(METRICS)
    for metric, (n_pairs, sd, plan) in expected.items():
        row = by_metric[metric]
        assert row["n_pairs"] == n_pairs and row["error_sd"] == pytest.approx(sd, rel=1e-12)
        assert row["per_side"] == plan.per_side and row["per_stratum"] == plan.per_stratum_a
        assert row["predicted_half_width"] == pytest.approx(plan.predicted_half_width, rel=1e-12)
    assert researcher_client.get(url).json()["planner"]["target_half_width"] == 0.25
    for bad in ("0", "-1", "nan", "abc", "5"):
        assert researcher_client.get(url, {"half_width": bad}).status_code == 400, bad

    # The cue check: the contrasts the audit's judge-corrected table marks cue-sensitive, per metric.
    results = judge_corrected_results(audit)
    assert results.subset is not None and results.subset.project_id == project.pk
    sensitive = {
        (c.metric, c.tutor, c.domain, c.dimension, c.level_a, c.level_b) for c in results.cells if c.cue.cue_sensitive
    }
    assert sensitive, "the planted error on the non-control turns makes some contrast cue-sensitive"
    section = cue_section(audit, project.pk)
    assert section.available
    found = {
        (metric, c.tutor, c.domain, c.dimension, c.level_a, c.level_b)
        for metric, contrasts in section.by_metric.items()
        for c in contrasts
    }
    assert found == sensitive
    assert sum(section.compared.values()) == len(results.cells)
    assert not cue_section(audit, project.pk + 1000).available  # another project's labels are not these

    page = researcher_client.get(reverse("annotation:judge-validation", args=[project.pk]), {"half_width": "0.4"})
    html = page.content.decode()
    assert page.status_code == 200 and "data-planner" in html and "Kish" in html
    first = expected[METRICS[0]][2]
    assert f"<td data-per-side>{first.per_side}</td>" in html
    assert html.count("data-cue-sensitive") == len(sensitive)
    assert reverse("audits:results-judge-corrected", args=[audit.pk]) in html
    assert "data-inclusion-probability>" in html
    bad = researcher_client.get(reverse("annotation:judge-validation", args=[project.pk]), {"half_width": "x"})
    assert bad.status_code == 200 and "must be a number" in bad.content.decode()
