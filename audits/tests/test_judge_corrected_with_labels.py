"""The judge-corrected table from real human labels, settled in the annotation app.

A judge-validation project is built from the audit with a fixed number of turns per stratum and labelled by three
annotators who score corrective_tone as the judge did before it was made harsh on one level; the settled consensus
reaches the table through the audits app's door into annotation, and the judge-only flag of that level is not
supported by the humans."""

import pytest

from annotation.judge_validation.services import validation_project_create
from annotation.selectors.judge_validation import validation_stage
from annotation.services.labelling import label_next, main_label_submit
from annotation.tests.judge_validation_setup import passed_annotators
from annotation.workflow.answers import Answer
from audits.judge import METRICS
from audits.models import TurnScore
from audits.services.analysis import audit_analysis
from audits.services.judge_corrected import judge_corrected_results
from audits.tests.judge_corrected_audit import HARSH_LEVEL, HARSH_METRIC, PARAMETERS, planted_audit

pytestmark = pytest.mark.django_db

PER_STRATUM = 12


def _answer(value: float | int | None) -> Answer:
    return Answer(value="n/a" if value is None or value == -1 else str(int(value)))


def test_labels_settled_in_annotation_make_the_harsh_flag_unsupported(make_user, researcher):
    audit, before = planted_audit("labelled judge-corrected audit")
    project = validation_project_create(audit=audit, per_stratum=PER_STRATUM, seed=2, training_pool=4, by=researcher)
    stage = validation_stage(project)
    for user in passed_annotators(stage, make_user):
        while (assignment := label_next(annotator=user, stage=stage)) is not None:
            turn = assignment.item.source_turn_id
            judge = dict(
                TurnScore.objects.filter(turn_id=turn, rubric_id=audit.judge_template_id).values_list("metric", "value")
            )
            answers = {metric: _answer(judge.get(metric)) for metric in METRICS}
            answers[HARSH_METRIC] = _answer(before.get(turn))  # the humans see the fair score
            main_label_submit(annotator=user, stage=stage, item=assignment.item, answers=answers)

    results = judge_corrected_results(audit, analysis=audit_analysis(audit=audit, parameters=PARAMETERS))
    assert results.subset is not None and results.subset.project_id == project.pk
    within = next(c for c in results.cells if c.family == "within" and c.metric == HARSH_METRIC)
    assert within.level_b == HARSH_LEVEL and within.judge_only_flag
    assert within.disagreement == "unsupported" and results.cells[0].disagreement == "unsupported"
    assert within.result.side_a.n_labelled >= 2 and within.result.side_b.n_labelled >= 2
    assert within.cue.cue_sensitive
    # where humans and judge agree, the judge is not cue-sensitive
    agreeing = [c for c in results.cells if c.metric != HARSH_METRIC]
    assert agreeing and not any(c.cue.cue_sensitive for c in agreeing)
