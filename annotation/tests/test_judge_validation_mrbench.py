"""Importing MRBench-style human labels (mapping of Maurya et al.'s labels to the rubric, errors that name
the record), and several judges side by side on the same labels: the simulation's rule-based judge and a
judge over the OpenAI protocol (a local test server), each run through the ledger; the report's exact
agreement per judge equals a count this test makes from the file and the stored scores."""

from pathlib import Path

import pytest
from django.conf import settings
from django.urls import reverse

from annotation.judge_validation.mrbench import MRBenchError, map_annotation, parse_history, parse_mrbench
from annotation.models import AnnotationProject, GoldLabel, JudgeScore
from audits.judge import METRICS
from audits.tests.engine_factories import openai_endpoint, simulation_endpoint
from audits.tests.openai_server import OpenAITestServer

SAMPLE = Path(settings.BASE_DIR) / "samples" / "mrbench_style_sample.json"


def test_maurya_labels_map_to_the_rubric():
    assert map_annotation(
        {
            "Mistake_Identification": "Yes",
            "Mistake_Location": "To some extent",
            "Revealing_of_the_Answer": "Yes (but the answer is incorrect)",
            "Providing_Guidance": "To some extent",
            "Actionability": "No",
            "Tutor_Tone": "Neutral",
            "Coherence": "Yes",
        },
        "r",
    ) == {"mistake_recognize": 1, "answer_leakage": 1, "step_scaffolded": 1, "actionability": 0, "corrective_tone": 1}
    assert map_annotation({"Mistake_Identification": "yes", "Mistake_Location": "Yes"}, "r") == {"mistake_recognize": 2}
    assert map_annotation({"Mistake_Identification": "No", "Mistake_Location": "Yes"}, "r") == {"mistake_recognize": 0}
    assert map_annotation(
        {"Tutor_Tone": "Offensive", "Revealing_of_the_Answer": "Yes (and the answer is correct)"}, "r"
    ) == {
        "answer_leakage": 2,
        "corrective_tone": 0,
    }
    assert parse_history("Tutor: Hi\nStudent: 2 + 2\nis 5?") == [("tutor", "Hi"), ("student", "2 + 2 is 5?")]


def test_the_sample_file_parses_and_bad_files_name_the_record():
    responses = parse_mrbench(SAMPLE.read_text())
    assert len(responses) == 8 and all(len(r.labels) == 5 for r in responses)
    with pytest.raises(MRBenchError, match="record 1 .*Tutor_Tone"):
        parse_mrbench(
            '[{"conversation_id": "x", "anno_llm_responses": '
            '{"T": {"response": "ok", "annotation": {"Tutor_Tone": "Rude"}}}}]'
        )
    with pytest.raises(MRBenchError, match="conversation_id"):
        parse_mrbench('[{"anno_llm_responses": {}}]')
    with pytest.raises(MRBenchError, match="not JSON"):
        parse_mrbench("{")
    with pytest.raises(MRBenchError, match="nested too deeply"):  # not a RecursionError out of the upload
        parse_mrbench("[" * 100_000 + "]" * 100_000)


@pytest.mark.django_db(transaction=True)
def test_two_judges_side_by_side_on_imported_labels(researcher_client, judge_runs_inline):
    with SAMPLE.open("rb") as handle:
        imported = researcher_client.post(reverse("annotation-jv-mrbench"), {"file": handle})
    assert imported.status_code == 201, imported.content
    project = AnnotationProject.objects.get(pk=imported.json()["project"])
    assert project.items.count() == 8 and GoldLabel.objects.filter(item__project=project).count() == 40

    rule_based = simulation_endpoint("rule-based judge")
    with OpenAITestServer() as server:
        llm = openai_endpoint("llm judge over http", server.base_url)
        for endpoint in (rule_based, llm):
            added = researcher_client.post(
                reverse("annotation-jv-judges", args=[project.pk]),
                {"judge_endpoint": endpoint.pk},
                content_type="application/json",
            )
            assert added.status_code == 201, added.content
        assert server.counts()["judge"] == 8  # one request per response; nothing re-sent
        again = researcher_client.post(
            reverse("annotation-jv-judges", args=[project.pk]),
            {"judge_endpoint": llm.pk},
            content_type="application/json",
        )
        assert again.json()["calls_sent"] == 0 and server.counts()["judge"] == 8

    report = researcher_client.get(reverse("annotation-jv-report", args=[project.pk])).json()
    assert [j["name"] for j in report["judges"]] == ["rule-based judge", "llm judge over http"]
    gold = {
        (item, metric): value
        for item, metric, value in GoldLabel.objects.filter(item__project=project).values_list(
            "item_id", "question__key", "value"
        )
    }
    for row in report["metrics"]:
        assert row["human_alpha_pre"]["value"] is None and row["n_consensus"] == 8
        best, best_agreement = None, -1.0
        for judge in report["judges"]:
            stored = dict(
                JudgeScore.objects.filter(validation_id=judge["id"], metric=row["metric"], status="ok").values_list(
                    "item_id", "value"
                )
            )
            hits = sum(("n/a" if v == -1 else str(v)) == gold[(item, row["metric"])] for item, v in stored.items())
            section = row["judges"][judge["key"]]
            assert section["exact_agreement"] == pytest.approx(hits / 8)
            # Imported labels have no human α to check: the verdict rests on the judge's agreement alone.
            assert section["verdict"]["outcome"] == ("pass" if hits / 8 >= 0.8 else "fail")
            if hits / 8 > best_agreement:
                best, best_agreement = judge["key"], hits / 8
        assert report["best_judge"][row["metric"]] == best
    assert set(METRICS) == {row["metric"] for row in report["metrics"]}
