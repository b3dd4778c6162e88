"""Every door that shows a verdict names its rule and follows it: the report page and API (``?rule=``, validated,
default ``interval``), the recorded validation, and the audit side's "is this judge validated" (its text, its
verdicts, the status API). A recording made before the rules had names is read under the interval rule."""

import pytest
from django.urls import reverse

from annotation.judge_validation import report as report_math
from annotation.judge_validation.services import validation_project_create, validation_record
from annotation.models import JudgeValidation
from annotation.selectors.judge_validation import validation_stage
from audits.judge import METRICS
from audits.selectors.judge_validation import audit_judge_validation

from .judge_validation_setup import passed_annotators, run_simulation_audit
from .test_judge_validation_rubric_versions import label_like_the_judge

pytestmark = pytest.mark.django_db(transaction=True)


def test_page_api_record_and_audit_status_name_the_rule_they_follow(make_user, researcher, researcher_client):
    audit = run_simulation_audit("verdict rule doors")
    project = validation_project_create(audit=audit, size=10, seed=1, training_pool=4, by=researcher)
    label_like_the_judge(
        validation_stage(project), passed_annotators(validation_stage(project), make_user), audit, METRICS
    )
    [validation] = project.judge_validations.all()

    url = reverse("annotation-jv-report", args=[project.pk])
    default = researcher_client.get(url).json()
    assert default["verdict_rule"] == {"name": "interval", "description": report_math.VERDICT_RULES["interval"]}
    assert [r["name"] for r in default["verdict_rules"]] == list(report_math.VERDICT_RULES)
    sections = [s for row in default["metrics"] for s in row["judges"].values()]
    assert sections and all(s["verdict"]["rule"] == "interval" for s in sections)
    assert all(set(s["verdict_by_rule"]) == set(report_math.VERDICT_RULES) for s in sections)
    for section in sections:
        if section["verdict"]["outcome"] == "pass":
            assert section["verdict"]["interval"]["low"] >= default["thresholds"]["judge_agreement_min"]
    point = researcher_client.get(url, {"rule": "point"}).json()
    assert point["verdict_rule"]["name"] == "point"
    assert all(s["verdict"]["rule"] == "point" for row in point["metrics"] for s in row["judges"].values())
    refused = researcher_client.get(url, {"rule": "median"})
    assert refused.status_code == 400 and "interval, point" in str(refused.json()["rule"])

    page = researcher_client.get(reverse("annotation:judge-validation", args=[project.pk]))
    html = page.content.decode()
    assert "Verdicts by the <strong data-rule-name>interval</strong> rule" in html
    assert 'data-rule="interval"' in html and "items with ≥ 2 ratings" in html and "turns rated by both" in html
    wrong = researcher_client.get(reverse("annotation:judge-validation", args=[project.pk]), {"rule": "median"})
    assert wrong.status_code == 200 and "The verdict rule is one of interval, point" in wrong.content.decode()

    validation_record(validation=validation, by=researcher)
    validation.refresh_from_db()
    assert validation.result["verdict_rule"]["name"] == "interval"
    status = audit_judge_validation(audit)
    assert status.rule == "interval" and "verdicts by the interval rule" in status.text
    recorded = {m: row["verdict_by_rule"]["interval"] for m, row in validation.result["metrics"].items()}
    assert status.verdicts == recorded
    api = researcher_client.get(reverse("annotation-jv-audit-status", args=[audit.pk])).json()
    assert api["verdict_rule"]["name"] == "interval" and api["verdicts"] == recorded
    assert (
        researcher_client.get(reverse("annotation-jv-audit-status", args=[audit.pk]), {"rule": "x"}).status_code == 400
    )

    # A recording from before the named rules: a point-rule pass whose interval reaches under the threshold
    metric = next(iter(validation.result["metrics"]))
    old = {
        metric: {"verdict": "pass", "kappa_linear": 0.85, "kappa_ci": [0.7, 0.95], "reasons": []},
    }
    JudgeValidation.objects.filter(pk=validation.pk).update(result={**validation.result, "metrics": old})
    status = audit_judge_validation(audit)
    assert status.verdicts == {metric: "fail"} and status.failed_metrics == [metric]
