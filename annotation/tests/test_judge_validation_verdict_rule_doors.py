"""Every door that shows a verdict names its rule and follows it: the report page and API (``?rule=``, validated,
default ``interval``), the recorded validation, and the audit side's "is this judge validated" (its text, its
verdicts, the status API). A recording made before the rules had names is read under the interval rule."""

import io
import json

import pandas as pd
import pytest
from django.urls import reverse
from drf_spectacular.generators import SchemaGenerator
from openapi_schema_validator import OAS30Validator

from annotation.judge_validation import report as report_math
from annotation.judge_validation.services import validation_project_create
from annotation.models import JudgeValidation
from annotation.selectors.judge_validation import validation_stage
from audits.judge import METRICS
from audits.selectors.judge_validation import audit_judge_validation

from .judge_validation_setup import passed_annotators, run_simulation_audit
from .test_judge_validation_rubric_versions import label_like_the_judge

pytestmark = pytest.mark.django_db


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
    assert 'data-rule="interval"' in html and html.count("with ≥ 2 ratings") >= 2 and "items rated" in html
    wrong = researcher_client.get(reverse("annotation:judge-validation", args=[project.pk]), {"rule": "median"})
    assert wrong.status_code == 200 and "The verdict rule is one of interval, point" in wrong.content.decode()

    recorded_page = researcher_client.post(
        reverse("annotation:judge-validation-action", args=[project.pk, "record"]),
        {"validation": validation.pk},
        follow=True,
    )
    assert "(the interval rule)" in recorded_page.content.decode()
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


def test_the_three_layers_and_the_planner_on_the_page_the_api_and_the_exports(make_user, researcher, researcher_client):
    audit = run_simulation_audit("layers doors")
    project = validation_project_create(audit=audit, size=10, seed=1, training_pool=4, by=researcher)
    stage = validation_stage(project)
    users = passed_annotators(stage, make_user)
    label_like_the_judge(stage, users, audit, METRICS)

    url = reverse("annotation-jv-report", args=[project.pk])
    body = researcher_client.get(url, {"epsilon": "0.1"}).json()
    # Annotators are named by their pseudonyms in every layer, never by user id.
    named = {a["annotator"] for a in body["metrics"][0]["layers"]["human_ceiling"]["per_annotator"]}
    assert len(named) == 3 and not named & {str(u.pk) for u in users} and not named & {u.pk for u in users}
    [first_judge] = body["metrics"][0]["layers"]["judges"].values()
    unmet = " ".join(first_judge["judge_vs_humans"]["alt_test"]["unmet"])
    assert all(f"annotator {u.pk} " not in unmet for u in users) and all(n in unmet for n in named)
    assert body["alt_test"]["epsilon"] == 0.1 and "crowd" in body["alt_test"]["epsilon_text"]
    row = body["metrics"][0]
    ceiling = row["layers"]["human_ceiling"]
    assert ceiling["human_alpha"]["units"]["items_rated"] > 0 and len(ceiling["per_annotator"]) == 3
    [judge] = row["layers"]["judges"].values()
    alt = judge["judge_vs_humans"]["alt_test"]
    assert alt["epsilon"] == 0.1 and alt["passed"] is False
    assert any("at least 30" in unmet for unmet in alt["unmet"])  # 10 turns: the requirement is stated
    assert "ac1" in judge["judge_vs_humans"] and "rank_agreement" in judge["direction"]
    assert set(judge["direction"]["by_stratum"]) == {"tutor", "condition"}
    plan = body["validation_plan"]
    assert [r["n_annotators"] for r in plan["alt_test"]] == [3, 4, 5] and plan["kappa_items"] > 0
    assert plan["epsilon"] == 0.1
    assert researcher_client.get(url, {"epsilon": "2"}).status_code == 400
    # The schema types the layers, the alt-test and the plan, and this body conforms to it.
    schema = json.loads(json.dumps(SchemaGenerator().get_schema(request=None, public=True), default=str))
    report_schema = schema["components"]["schemas"]["ValidationReport"]["properties"]
    assert report_schema["metrics"]["items"] == {"$ref": "#/components/schemas/JvMetric"}
    assert {"$ref": "#/components/schemas/JvAltTestChoice"} in report_schema["alt_test"]["allOf"]
    alt = schema["components"]["schemas"]["JvAltTestAnnotator"]["properties"]
    assert "p_adjusted" in alt and "rejected" in alt
    validator = OAS30Validator({"$ref": "#/components/schemas/ValidationReport", "components": schema["components"]})
    assert [e.message for e in validator.iter_errors(body)] == []
    assert researcher_client.get(url, {"judge_accuracy": "7"}).status_code == 400

    page = researcher_client.get(reverse("annotation:judge-validation", args=[project.pk]))
    html = page.content.decode()
    for marker in ("data-layer-ceiling", "data-layer-judge", "data-alt-test", "data-layer-direction"):
        assert marker in html
    assert "ε = 0.20 (expert annotators" in html and "data-validation-plan" in html and "data-kappa-plan" in html

    page_url = reverse("annotation:judge-validation", args=[project.pk])
    csv_export = researcher_client.get(page_url, {"export": "csv", "rule": "point", "epsilon": "0.1"})
    assert csv_export["Content-Type"].startswith("text/csv")
    lines = csv_export.content.decode().splitlines()
    header = lines[0].split(",")
    assert "verdict_rule" in header and "alt_test_omega" in header and "tutor_rank_tau" in header
    assert len(lines) == 1 + len(METRICS) and all(",point," in line for line in lines[1:])
    as_json = researcher_client.get(page_url, {"export": "json", "epsilon": "0.1"}).json()
    assert as_json["verdict_rule"]["name"] == "interval" and "layers" in as_json["metrics"][0]
    # Both planners travel with the exports, equal to what the API (and the page, from the same selector) shows.
    assert as_json["validation_plan"] == plan and as_json["planner"] == body["planner"]
    page_plan = researcher_client.get(page_url, {"epsilon": "0.1"}).content.decode()
    for r in plan["alt_test"]:
        assert f"<tr><td>{r['n_annotators']}</td><td data-alt-items>{r['items_per_annotator']}</td>" in page_plan
    assert f"<strong>{plan['kappa_items']}</strong>" in page_plan
    table = pd.read_csv(io.StringIO(csv_export.content.decode()))
    assert len(table) == len(METRICS)
    for column, value in (
        ("plan_epsilon", 0.1),
        ("plan_target", plan["target"]),
        ("plan_kappa_items", plan["kappa_items"]),
        *((f"plan_{name}", value) for name, value in plan["inputs"].items()),
        *((f"plan_alt_test_items_{r['n_annotators']}_annotators", r["items_per_annotator"]) for r in plan["alt_test"]),
    ):
        assert list(table[column]) == [value] * len(METRICS), column
    assert {r["metric"] for r in body["planner"]["rows"]} == set(METRICS)
    for r in body["planner"]["rows"]:
        [exported] = table[table["metric"] == r["metric"]].to_dict("records")
        assert exported["planner_n_pairs"] == r["n_pairs"]
        assert exported["planner_target_half_width"] == body["planner"]["target_half_width"]
        for field in ("error_sd", "per_side", "per_stratum", "predicted_half_width"):
            assert (pd.isna(exported[f"planner_{field}"]) and r[field] is None) or exported[
                f"planner_{field}"
            ] == pytest.approx(r[field], rel=1e-12), field
    assert researcher_client.get(page_url, {"export": "xml"}).status_code == 404
