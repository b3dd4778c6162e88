"""Importing MRBench-style human labels (mapping of Maurya et al.'s labels to the rubric, errors that name
the record), and several judges side by side on the same labels: the simulation's rule-based judge and a
judge over the OpenAI protocol (a local test server), each run through the ledger; the report's exact
agreement and κ per judge equal what this test computes from the file and the stored scores, and imported
labels (one per response, human reliability unknown) never give a pass."""

from pathlib import Path

import pytest
from django.conf import settings
from django.urls import reverse
from sklearn.metrics import cohen_kappa_score

from annotation.judge_validation.mrbench import MRBenchError, map_annotation, parse_history, parse_labelled_file
from annotation.models import AnnotationProject, GoldLabel, JudgeScore
from audits.judge import METRICS
from audits.tests.engine_factories import openai_endpoint, simulation_endpoint
from audits.tests.openai_server import OpenAITestServer

SAMPLE = Path(settings.BASE_DIR) / "samples" / "mrbench_style_sample.json"


def test_maurya_labels_map_to_the_rubric():
    # "Yes (but the answer is incorrect)" is not a leak level: left unmapped, and said so.
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
    ) == (
        {"mistake_recognize": "1", "step_scaffolded": "1", "actionability": "0", "corrective_tone": "1"},
        {"answer_leakage": "Yes (but the answer is incorrect)"},
    )
    assert map_annotation({"Mistake_Identification": "yes", "Mistake_Location": "Yes"}) == (
        {"mistake_recognize": "2"},
        {},
    )
    assert map_annotation({"Mistake_Identification": "No", "Mistake_Location": "Yes"})[0] == {"mistake_recognize": "0"}
    assert map_annotation({"Tutor_Tone": "Offensive", "Revealing_of_the_Answer": "Yes (and the answer is correct)"})[
        0
    ] == {"answer_leakage": "2", "corrective_tone": "0"}
    assert parse_history("Tutor: Hi\nStudent: 2 + 2\nis 5?") == ("", [("tutor", "Hi"), ("student", "2 + 2 is 5?")])


def test_the_sample_file_parses_and_bad_files_name_the_record():
    responses = parse_labelled_file(SAMPLE.read_text()).responses
    # Five metrics each, or four and an incorrect answer revealed left unmapped.
    assert len(responses) == 8 and all(len(r.labels) + len(r.unmapped) == 5 for r in responses)
    assert sum(bool(r.unmapped) for r in responses) == 1
    with pytest.raises(MRBenchError, match="record 1 .*Tutor_Tone"):
        parse_labelled_file(
            '[{"conversation_id": "x", "anno_llm_responses": '
            '{"T": {"response": "ok", "annotation": {"Tutor_Tone": "Rude"}}}}]'
        )
    with pytest.raises(MRBenchError, match="conversation_id"):
        parse_labelled_file('[{"anno_llm_responses": {}}]')
    with pytest.raises(MRBenchError, match="not valid JSON"):
        parse_labelled_file("{")
    with pytest.raises(MRBenchError, match="nested too deeply"):  # not a RecursionError out of the upload
        parse_labelled_file("[" * 100_000 + "]" * 100_000)


@pytest.mark.django_db
def test_two_judges_side_by_side_on_imported_labels(researcher_client, judge_runs_inline):
    with SAMPLE.open("rb") as handle:
        imported = researcher_client.post(reverse("annotation-jv-mrbench"), {"file": handle})
    assert imported.status_code == 201, imported.content
    project = AnnotationProject.objects.get(pk=imported.json()["project"])
    # 40 labels less the one incorrect answer revealed, which has no answer_leakage value.
    assert project.items.count() == 8 and GoldLabel.objects.filter(item__project=project).count() == 39

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
        labelled = sum(metric == row["metric"] for _, metric in gold)
        assert row["human_alpha_pre"]["value"] is None and row["n_consensus"] == labelled
        best, best_kappa = None, -2.0
        for judge in report["judges"]:
            stored = dict(
                JudgeScore.objects.filter(validation_id=judge["id"], metric=row["metric"], status="ok").values_list(
                    "item_id", "value"
                )
            )
            given = {item: "n/a" if v == -1 else str(v) for item, v in stored.items()}
            given = {item: value for item, value in given.items() if (item, row["metric"]) in gold}
            hits = sum(value == gold[(item, row["metric"])] for item, value in given.items())
            section = row["judges"][judge["key"]]
            assert section["exact_agreement"] == pytest.approx(hits / labelled)
            on_scale = [
                (int(v), int(gold[(i, row["metric"])]))
                for i, v in given.items()
                if "n/a" not in (v, gold[(i, row["metric"])])
            ]
            kappa = section["kappa_linear"]["value"]
            if len({x for pair in on_scale for x in pair}) > 1:
                expected = cohen_kappa_score(*zip(*on_scale, strict=True), weights="linear", labels=[0, 1, 2])
                assert kappa == pytest.approx(expected, abs=1e-12)
            # Imported labels are one per response: no human α, so no pass whatever the judge's agreement.
            assert section["verdict"]["outcome"] in ("fail", "undecided")
            if kappa is not None and (kappa < 0.8 or section["applicability_mismatch"] > 0.2):
                assert section["verdict"]["outcome"] == "fail"
            else:
                assert "human reliability unknown" in section["verdict"]["reasons"][-1]
            if kappa is not None and kappa > best_kappa:
                best, best_kappa = judge["key"], kappa
        assert report["best_judge"][row["metric"]] == best
    assert set(METRICS) == {row["metric"] for row in report["metrics"]}
