"""An audit's human subset: a project built with per_stratum = k records π = min(k, available) / available per
tutor × domain × condition stratum, its items carry their condition, question and π, and audit_human_subset
returns the settled consensus of every sampled turn on the rubric's scale ("n/a" left out) with its π; an audit
without a judge-validation project has none."""

from collections import Counter

import pytest

from annotation.judge_validation.audit_source import audit_turn_candidates
from annotation.judge_validation.services import validation_project_create
from annotation.models import Adjudication
from annotation.selectors.judge_validation import sampled_items, validation_stage
from annotation.services.labelling import label_next, main_label_submit
from annotation.workflow.answers import Answer
from audits.judge import METRICS
from audits.models import Dialogue, TurnScore
from audits.selectors.judge_validation import audit_human_subset
from audits.services.audit_lifecycle import audit_clone

from .judge_validation_setup import passed_annotators, run_simulation_audit

pytestmark = pytest.mark.django_db

PER_STRATUM = 2


def human_answer(judge_value: int) -> str:
    """What the humans say: "n/a" where the judge said so, else one step round the scale from the judge."""
    return "n/a" if judge_value == -1 else str((judge_value + 1) % 3)


def test_per_stratum_sample_records_its_probabilities_and_the_subset_is_the_settled_consensus(make_user, researcher):
    audit = run_simulation_audit("human subset audit", questions=2)
    candidates = audit_turn_candidates(audit)
    available = Counter(c.stratum for c, _ in candidates)
    project = validation_project_create(audit=audit, per_stratum=PER_STRATUM, seed=1, training_pool=4, by=researcher)

    sample = project.options["sample"]
    assert sample["mode"] == "per_stratum" and sample["per_stratum"] == PER_STRATUM
    rows = {(r["tutor_id"], r["domain"], r["condition_id"]): r for r in sample["allocation"]}
    assert set(rows) == set(available) and len(rows) >= 8
    for stratum, n in available.items():
        row = rows[stratum]
        assert row["available"] == n and row["chosen"] == min(PER_STRATUM, n)
        assert row["inclusion_probability"] == pytest.approx(min(PER_STRATUM, n) / n)
        assert row["condition"] and row["condition_kind"] in {"control", "explicit", "implicit"}

    items = list(sampled_items(project))
    assert len(items) == sum(min(PER_STRATUM, n) for n in available.values())
    dialogue_of = {d.pk: d for d in Dialogue.objects.filter(pk__in=[i.metadata["dialogue_id"] for i in items])}
    for item in items:
        dialogue = dialogue_of[item.metadata["dialogue_id"]]
        assert item.metadata["condition_id"] == dialogue.condition_id
        assert item.metadata["question_id"] == dialogue.question_id
        row = rows[(dialogue.tutor_id, item.metadata["domain"], dialogue.condition_id)]
        assert item.metadata["inclusion_probability"] == row["inclusion_probability"]

    # Nothing settled yet: the subset exists but holds no value.
    empty = audit_human_subset(audit)
    assert empty.project_id == project.pk and empty.labelled_items == 0 and empty.updated_at is None
    assert all(not by_turn for by_turn in empty.values.values())

    # Three annotators answer alike (so each item settles at once), one step away from the judge.
    stage = validation_stage(project)
    judge = {
        (row["turn_id"], row["metric"]): row["value"]
        for row in TurnScore.objects.filter(
            turn_id__in=[i.source_turn_id for i in items], rubric_id=audit.judge_template_id
        ).values("turn_id", "metric", "value")
    }
    for user in passed_annotators(stage, make_user):
        while (assignment := label_next(annotator=user, stage=stage)) is not None:
            turn = assignment.item.source_turn_id
            answers = {m: Answer(value=human_answer(judge[(turn, m)])) for m in METRICS}
            main_label_submit(annotator=user, stage=stage, item=assignment.item, answers=answers)

    subset = audit_human_subset(audit)
    assert subset.project_id == project.pk and subset.project_name == project.name
    assert subset.rubric_label == project.judge_validations.get().rubric.label
    assert subset.labelled_items == len(items)
    newest = Adjudication.objects.filter(stage=stage).order_by("-created_at").first()
    assert newest is not None and subset.updated_at == newest.created_at
    assert set(subset.values) == set(METRICS)
    for metric in METRICS:
        expected = {
            item.source_turn_id: (
                float(human_answer(judge[(item.source_turn_id, metric)])),
                item.metadata["inclusion_probability"],
            )
            for item in items
            if judge[(item.source_turn_id, metric)] != -1
        }
        assert subset.values[metric] == expected, metric
    assert any(subset.values[m] for m in METRICS)

    # An audit with no judge-validation project has no human subset.
    assert audit_human_subset(audit_clone(audit=audit, change={"seed": audit.seed + 1})) is None
