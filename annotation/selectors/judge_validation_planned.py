"""The judge-validation report with its two planners: the one answer the page, the API and the exports all show.

`selectors.judge_validation.validation_report` (verdicts, the three validity layers) plus, under ``planner``, the
label planner (human-labelled turns a judge-corrected contrast needs for a target half-width, per metric and judge)
and, under ``validation_plan``, the validation's own size (items per annotator for the alt-test to pass with
probability 0.8, items for κ's interval to reach a half-width), both from `annotation.judge_validation.planner`.
"""

from __future__ import annotations

from annotation.judge_validation import report as report_math
from annotation.judge_validation import validity
from annotation.judge_validation.planner import DEFAULT_HALF_WIDTH, label_planner, validation_design_plan
from annotation.models import AnnotationProject, RubricVersion
from annotation.selectors.judge_validation import validation_report
from annotation.selectors.validation_projects import project_judges


def planned_validation_report(
    project: AnnotationProject,
    *,
    rubric: RubricVersion | None = None,
    rule: str = report_math.DEFAULT_VERDICT_RULE,
    epsilon: float = validity.EPSILON_EXPERT,
    half_width: float = DEFAULT_HALF_WIDTH,
    design_inputs: dict[str, float] | None = None,
) -> dict:
    """`validation_report` under ``rubric`` (default: the latest validated) with ``planner`` (the label planner at
    ``half_width``, as a dict) and ``validation_plan`` (the alt-test at ``epsilon`` and κ's interval, from
    ``design_inputs``; blank: the defaults)."""
    report = validation_report(project, rubric=rubric, rule=rule, epsilon=epsilon)
    rubric = rubric or RubricVersion.objects.get(pk=report["rubric"]["id"])
    planner = label_planner(
        project, rubric=rubric, validations=project_judges(project, rubric), target_half_width=half_width
    )
    return {
        **report,
        "planner": planner.as_dict(),
        "validation_plan": validation_design_plan(epsilon=epsilon, inputs=design_inputs),
    }
