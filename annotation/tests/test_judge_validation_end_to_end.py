"""Acceptance 1: simulation audit → validation project (through the API) → three annotators label through
the main-labelling API with scripted answers of known agreement, discuss and are adjudicated → the report's
α (before and after discussion), Cohen's κ (linear) and exact agreement equal what this test computes from
its own script with the `krippendorff` package and scikit-learn directly."""

import krippendorff
import numpy as np
import pytest
from django.urls import reverse
from sklearn.metrics import cohen_kappa_score

from annotation.models import AnnotationProject, MainItem
from annotation.selectors.judge_validation import sampled_items, validation_stage
from audits.judge import METRICS
from audits.models import TurnScore

from .judge_validation_setup import passed_annotators, run_simulation_audit

pytestmark = pytest.mark.django_db

NA = "n/a"
ALT_1 = {NA: "1", "0": "1", "1": "2", "2": "1"}
ALT_2 = {NA: "0", "0": "2", "1": "0", "2": "0"}


def judge_value(value: int) -> str:
    return NA if value == -1 else str(value)


def scripted(judge: str, position: int, metric_index: int) -> list[str]:
    """The three annotators' first answers: the first agrees with the judge, the others deviate on a rhythm."""
    second = ALT_1[judge] if (position + metric_index) % 3 == 0 else judge
    third = ALT_2[judge] if (position + metric_index) % 4 == 1 else judge
    return [judge, second, third]


def as_number(value: str) -> float:
    return np.nan if value == NA else float(value)


def package_alpha(data: np.ndarray) -> float | None:
    """The `krippendorff` package's ordinal α; its NaN (one value only, no expected disagreement) is what the
    report calls undefined (None)."""
    if np.unique(data[~np.isnan(data)]).size < 2:
        return None
    value = krippendorff.alpha(reliability_data=data, level_of_measurement="ordinal")
    return None if np.isnan(value) else float(value)


def api(client, user, method, url, data=None):
    client.force_login(user)
    response = getattr(client, method)(url, data=data, content_type="application/json")
    return response


def test_report_statistics_equal_independent_computation(client, researcher, adjudicator, make_user):
    audit = run_simulation_audit("end-to-end audit")
    created = api(
        client,
        researcher,
        "post",
        reverse("annotation-jv-create"),
        {"audit": audit.pk, "size": 14, "seed": 3, "training_pool": 4},
    )
    assert created.status_code == 201, created.content
    project = AnnotationProject.objects.get(pk=created.json()["project"])
    assert project.kind == AnnotationProject.Kind.JUDGE_VALIDATION and project.source_audit_id == audit.pk
    stage = validation_stage(project)
    assert stage.overlap == 3 and stage.resolution_policy == "discussion_senior"
    assert [q.key for q in stage.questions.order_by("position")] == list(METRICS)
    items = list(sampled_items(project))
    assert len(items) == 14 and MainItem.objects.filter(stage=stage).count() == 14
    position = {item.pk: i for i, item in enumerate(items)}

    # The judge's values straight from the audit's scores (not from the validation's copy).
    judge = {
        (item.pk, score.metric): judge_value(score.value)
        for item in items
        for score in TurnScore.objects.filter(turn_id=item.source_turn_id, rubric_id=audit.judge_template_id)
    }
    script = {
        (item.pk, metric): scripted(judge[(item.pk, metric)], position[item.pk], m)
        for item in items
        for m, metric in enumerate(METRICS)
    }

    annotators = passed_annotators(stage, make_user)
    next_url = reverse("annotation-main-next", args=[stage.pk])
    submit_url = reverse("annotation-main-submit", args=[stage.pk])
    for a, user in enumerate(annotators):
        for _ in items:
            given = api(client, user, "get", next_url)
            assert given.status_code == 200, given.content
            item_id = given.json()["item"]["id"]
            answers = {metric: {"value": script[(item_id, metric)][a]} for metric in METRICS}
            done = api(client, user, "post", submit_url, {"item": item_id, "answers": answers, "seconds": 20})
            assert done.status_code == 201, done.content
        assert api(client, user, "get", next_url).status_code == 204

    # Discussion: on even positions everyone moves to the third annotator's answer (settled in discussion);
    # on odd positions everyone keeps theirs, and the senior reviewer takes the second annotator's.
    consensus, after = {}, {}
    for item in items:
        disputed = [m for m in METRICS if len(set(script[(item.pk, m)])) > 1]
        for metric in METRICS:
            first = script[(item.pk, metric)]
            if metric not in disputed:
                consensus[(item.pk, metric)] = first[0]
                after[(item.pk, metric)] = first
            elif position[item.pk] % 2 == 0:
                consensus[(item.pk, metric)] = first[2]
                after[(item.pk, metric)] = [first[2]] * 3
            else:
                consensus[(item.pk, metric)] = first[1]
                after[(item.pk, metric)] = first
        if not disputed:
            continue
        url = reverse("annotation-main-discussion", args=[stage.pk, item.pk])
        for a, user in enumerate(annotators):
            answers = {m: {"value": after[(item.pk, m)][a]} for m in disputed}
            response = api(client, user, "post", url, {"answers": answers, "comment": "my reading of the rubric"})
            assert response.status_code == 200, response.content
        if position[item.pk] % 2 == 1:
            decided = api(
                client,
                adjudicator,
                "post",
                reverse("annotation-adjudication-item", args=[stage.pk, item.pk]),
                {"decisions": {m: consensus[(item.pk, m)] for m in disputed}, "note": "second reading is right"},
            )
            assert decided.status_code == 200, decided.content

    report = api(client, researcher, "get", reverse("annotation-jv-report", args=[project.pk]))
    assert report.status_code == 200
    body = report.json()
    [validation] = body["judges"]
    key = validation["key"]
    assert body["n_sample"] == 14 and validation["name"] == audit.judge_endpoint.name

    checked = 0
    for row in body["metrics"]:
        metric = row["metric"]
        pre = np.array([[as_number(script[(i.pk, metric)][a]) for i in items] for a in range(3)])
        post = np.array([[as_number(after[(i.pk, metric)][a]) for i in items] for a in range(3)])
        judge_row = np.array([[as_number(judge[(i.pk, metric)]) for i in items]])
        expected_pre, expected_post = package_alpha(pre), package_alpha(post)
        expected_with_judge = package_alpha(np.vstack([pre, judge_row]))
        pairs = [(judge[(i.pk, metric)], consensus[(i.pk, metric)]) for i in items]
        exact = sum(j == c for j, c in pairs) / len(pairs)
        on_scale = [(int(j), int(c)) for j, c in pairs if NA not in (j, c)]
        section = row["judges"][key]
        for got, expected in (
            (row["human_alpha_pre"]["value"], expected_pre),
            (row["human_alpha_post"]["value"], expected_post),
            (section["alpha_with_judge"]["value"], expected_with_judge),
        ):
            assert (got is None) == (expected is None) and (got is None or got == pytest.approx(expected, abs=1e-12))
        assert section["exact_agreement"] == pytest.approx(exact, abs=1e-12)
        assert section["n_compared"] == 14
        if len({v for pair in on_scale for v in pair}) > 1:
            expected_kappa = cohen_kappa_score(
                [j for j, _ in on_scale], [c for _, c in on_scale], weights="linear", labels=[0, 1, 2]
            )
            assert section["kappa_linear"]["value"] == pytest.approx(expected_kappa, abs=1e-12)
            checked += 1
        assert sum(map(sum, section["confusion"]["rows"])) == 14
        differing = [d["item"] for d in section["largest_differences"]]
        assert differing == sorted(
            differing, key=lambda i: (-next(d["distance"] for d in section["largest_differences"] if d["item"] == i), i)
        )
        assert len(differing) == min(10, sum(j != c for j, c in pairs))
        # Each differing turn names where it comes from and links to its transcript.
        by_id = {i.pk: i for i in items}
        for d in section["largest_differences"]:
            item = by_id[d["item"]]
            dialogue = reverse("audits:dialogue-detail", args=[item.metadata["dialogue_id"]])
            assert d["source"]["tutor"] == item.metadata["tutor"] and d["source"]["external_id"] == item.external_id
            assert d["source"]["link"] == f"{dialogue}#turn-{item.metadata['turn_index']}"
            assert (
                d["source"]["conversation_id"]
                == f"dialogue {item.metadata['dialogue_id']}, turn {item.metadata['turn_index']}"
            )
    assert checked >= 3  # κ was checked on most metrics (a metric with one value on the scale has none)
    # The scripts disagree, so neither α nor agreement is trivially 1.
    assert any(row["human_alpha_pre"]["value"] not in (None, 1.0) for row in body["metrics"])
    assert any(row["judges"][key]["exact_agreement"] < 1 for row in body["metrics"])

    # The report page shows the same numbers, with links to the transcripts.
    client.force_login(researcher)
    page = client.get(reverse("annotation:judge-validation", args=[project.pk]))
    assert page.status_code == 200
    html = page.content.decode()
    first = body["metrics"][0]
    if first["human_alpha_pre"]["value"] is not None:
        assert f"{first['human_alpha_pre']['value']:.3f}" in html
    assert reverse("audits:dialogue-detail", args=[items[0].metadata["dialogue_id"]]) in html or "largest" in html
