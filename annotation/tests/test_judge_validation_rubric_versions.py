"""Acceptance 4: after a rubric version change the audit shows "not validated" for the new version until a
validation on it exists. Also: a workshop records what was discussed and makes the next version (judge
prompt and guideline together), the judge re-runs on the sampled turns through the ledger (a second run
sends nothing), and only the metrics whose definition changed wait for new human labels."""

from datetime import date

import pytest

from annotation.judge_validation.judging import judge_validation_add
from annotation.judge_validation.services import validation_project_create, validation_record, workshop_record
from annotation.models import JudgeScore, JudgeValidation, RubricVersion
from annotation.selectors.judge_validation import (
    judge_validation_status,
    sampled_items,
    validation_report,
    validation_stage,
)
from annotation.services.labelling import label_next, main_label_submit
from annotation.services.training import guideline_confirm
from annotation.workflow.answers import Answer
from audits.judge import METRICS
from audits.models import Audit, PromptTemplate, TurnScore
from audits.selectors.results import judge_validation_status as audit_page_status
from audits.services.audit_lifecycle import audit_clone

from .judge_validation_setup import passed_annotators, run_simulation_audit

pytestmark = pytest.mark.django_db


def label_like_the_judge(stage, users, audit, metrics):
    """Every annotator answers what the audit's judge said (unanimous, so every item resolves at once)."""
    for user in users:
        while (assignment := label_next(annotator=user, stage=stage)) is not None:
            scores = dict(
                TurnScore.objects.filter(
                    turn_id=assignment.item.source_turn_id, rubric_id=audit.judge_template_id
                ).values_list("metric", "value")
            )
            answers = {m: Answer(value="n/a" if scores[m] == -1 else str(scores[m])) for m in metrics}
            main_label_submit(annotator=user, stage=stage, item=assignment.item, answers=answers)


def test_a_new_rubric_version_is_not_validated_until_a_validation_on_it_is_recorded(
    make_user, researcher, judge_runs_inline
):
    audit = run_simulation_audit("rubric audit")
    assert audit_page_status(audit) == "not validated"
    project = validation_project_create(audit=audit, size=10, seed=1, training_pool=4, by=researcher)
    stage = validation_stage(project)
    users = passed_annotators(stage, make_user)
    label_like_the_judge(stage, users, audit, METRICS)

    [v1] = project.judge_validations.all()
    assert audit_page_status(audit) == "not validated"  # scored and labelled, but nothing recorded yet
    validation_record(validation=v1, by=researcher)
    text = audit_page_status(audit)
    assert text.startswith("judge validated on rubric v1 (") and "10 turns" in text and "pass: " in text
    assert judge_validation_status(audit).validated

    # A workshop: the tone definition changes; the rubric becomes v2 (new judge template version too).
    first_item = sampled_items(project).first()
    workshop = workshop_record(
        project=project,
        from_rubric=v1.rubric,
        held_on=date(2026, 11, 30),
        notes="Neutral vs encouraging was read two ways; encouraging now needs praise of the effort.",
        disagreements=[{"item": first_item.pk, "metric": "corrective_tone", "note": "neutral or encouraging?"}],
        guideline=v1.rubric.guideline + "\n\nEncouraging: the tutor praises the student's effort explicitly.",
        changed_metrics=["corrective_tone"],
        judge_prompt=PromptTemplate.objects.get(pk=v1.rubric.judge_template_id).text
        + "\nFor corrective_tone, 2 requires explicit praise of the student's effort.",
        by=researcher,
    )
    v2_rubric = workshop.to_rubric
    assert v2_rubric.version == v1.rubric.version + 1 and v2_rubric.previous == v1.rubric
    new_template = PromptTemplate.objects.get(pk=v2_rubric.judge_template_id)
    assert new_template.previous_id == v1.rubric.judge_template_id
    assert workshop.relabel_stage is not None
    assert list(workshop.relabel_stage.questions.values_list("key", flat=True)) == ["corrective_tone"]

    # The audit re-judged under v2 (a clone with that one factor changed) is not validated; neither is the
    # original audit's judge asked about v2. The original stays validated on v1.
    clone = audit_clone(audit=audit, change={"judge_template": new_template})
    assert audit_page_status(clone) == "not validated"
    assert not judge_validation_status(audit, rubric_version=v2_rubric).validated
    assert audit_page_status(audit).startswith("judge validated on rubric v1")

    # The judge re-runs on the sampled turns under v2 through the ledger: the new prompt means new calls;
    # a second run sends nothing new.
    endpoint = audit.judge_endpoint
    v2, _ = judge_validation_add(project=project, endpoint=endpoint, rubric=v2_rubric)
    v2.refresh_from_db()
    # (Turns with the same text and context are one request, answered once: a few of the ten sampled turns
    # may repeat another's, so not every turn is a call of its own — but nothing comes from v1's answers.)
    assert (
        v2.calls_sent >= 5
        and v2.calls_sent + v2.calls_cached == 10
        and JudgeScore.objects.filter(validation=v2).count() == 10 * len(METRICS)
    )
    again, _ = judge_validation_add(project=project, endpoint=endpoint, rubric=v2_rubric)
    again.refresh_from_db()
    assert again.pk == v2.pk and again.calls_sent == 0 and again.calls_cached == 10

    # Until humans re-label the changed metric, v2 has no consensus on it; the others reuse v1's labels.
    report = validation_report(project, rubric=v2_rubric)
    by_metric = {row["metric"]: row for row in report["metrics"]}
    assert by_metric["corrective_tone"]["n_consensus"] == 0
    assert by_metric["corrective_tone"]["judges"][str(v2.pk)]["verdict"]["outcome"] == "undecided"
    assert by_metric["actionability"]["n_consensus"] == 10

    relabel = workshop.relabel_stage
    for user in users:
        guideline_confirm(enrollment=relabel.enrollments.get(user=user))
    label_like_the_judge(relabel, users, audit, ["corrective_tone"])
    report = validation_report(project, rubric=v2_rubric)
    assert {row["metric"]: row["n_consensus"] for row in report["metrics"]}["corrective_tone"] == 10

    validation_record(validation=v2, by=researcher)
    clone_text = audit_page_status(clone)
    assert clone_text.startswith("judge validated on rubric v2 (") and f"on audit #{audit.pk}" in clone_text
    assert audit_page_status(audit).startswith("judge validated on rubric v1")
    assert JudgeValidation.objects.filter(status="recorded").count() == 2
    assert RubricVersion.objects.count() == 2
    assert Audit.objects.get(pk=clone.pk).judge_template_id == new_template.pk
