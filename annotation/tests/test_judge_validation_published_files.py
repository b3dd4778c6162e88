"""The published MRBench V1 and BEA 2025 layouts import as they are (excerpts in
`judge_validation_excerpts`): every response becomes an item, a repeated conversation id is kept apart by
record and Split (with a warning), Novice-less dialogues and the "Turor:" typo are read, and the counts per
dimension and per tutor that the report shows equal the counts this test makes from the JSON itself. Files
that cannot be imported are refused with the real cause; a dimension the file lacks is stated and its
metric left out of the verdicts; imported labels never pass (human reliability unknown); the labels
exports hold the imported labels; differing items link to their transcript with their source ids."""

import csv
import io
import json
from collections import Counter
from io import StringIO

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.test import override_settings
from django.urls import reverse

from annotation.judge_validation import mrbench
from annotation.judge_validation.importing import NOT_GIVEN_ANSWER, labelled_file_import
from annotation.judge_validation.mrbench import MRBenchError, parse_labelled_file
from annotation.judge_validation.report import HUMAN_RELIABILITY_UNKNOWN, NOT_LABELLED
from annotation.judge_validation.services import judge_validation_create
from annotation.models import AnnotationProject, GoldLabel, JudgeScore, RubricVersion
from annotation.selectors import exports

from .judge_validation_excerpts import BEA_DEV, INCORRECT, MRBENCH_V1, bea_dev_text, mrbench_v1_text, responses_of

CANONICAL = {"humanlikeness": "Humanlikeness"}


def file_counts(records) -> tuple[dict, dict]:
    """Per dimension (label → n) and per tutor (responses, dimension → label → n), from the JSON."""
    by_dimension, by_tutor = {}, {}
    for _, tutor, annotation in responses_of(records):
        row = by_tutor.setdefault(tutor, {"responses": 0, "dimensions": {}})
        row["responses"] += 1
        for dimension, label in annotation.items():
            name = CANONICAL.get(dimension, dimension)
            by_dimension.setdefault(name, Counter())[label] += 1
            row["dimensions"].setdefault(name, Counter())[label] += 1
    return (
        {d: dict(c) for d, c in by_dimension.items()},
        {
            t: {"responses": r["responses"], "dimensions": {d: dict(c) for d, c in r["dimensions"].items()}}
            for t, r in by_tutor.items()
        },
    )


def test_mrbench_v1_layout_reads_every_response_and_keeps_repeated_ids_apart():
    parsed = parse_labelled_file(mrbench_v1_text())
    assert parsed.schema == mrbench.MRBENCH and parsed.n_records == 3
    assert len(parsed.responses) == len(responses_of(MRBENCH_V1)) == 8
    ids = [r.external_id for r in parsed.responses]
    assert len(set(ids)) == 8
    assert "291616268/r1/test:Expert" in ids and "291616268/r2/train:Expert" in ids
    assert "2895106109:Mistral" in ids  # a conversation id seen once keeps the plain source id
    assert parsed.repeated_conversations == {"291616268": 2}
    assert any("1 conversation id occurs in more than one record (291616268)" in w for w in parsed.warnings)
    # Novice only where the file has it; the eight dimensions found, humanlikeness under its canonical name.
    assert Counter(r.tutor for r in parsed.responses)["Novice"] == 1
    assert parsed.dimensions == list(mrbench.DIMENSIONS) and parsed.missing_dimensions == []
    # "Yes (but the answer is incorrect)" is not folded into a leak level: no value, stated and kept.
    mistral = next(r for r in parsed.responses if r.tutor == "Mistral")
    assert "answer_leakage" not in mistral.labels and mistral.unmapped == {"answer_leakage": INCORRECT}
    assert mistral.source_labels["Revealing_of_the_Answer"] == INCORRECT
    assert any("1 response labelled 'Yes (but the answer is incorrect)'" in w for w in parsed.warnings)
    novice = next(r for r in parsed.responses if r.tutor == "Novice")
    assert novice.labels == {
        "mistake_recognize": "1",
        "answer_leakage": "2",
        "step_scaffolded": "0",
        "actionability": "0",
        "corrective_tone": "0",
    }


def test_bea_layout_reads_four_dimensions_and_the_turor_typo():
    parsed = parse_labelled_file(bea_dev_text())
    assert parsed.schema == mrbench.BEA2025 and len(parsed.responses) == len(responses_of(BEA_DEV)) == 5
    assert parsed.dimensions == ["Mistake_Identification", "Mistake_Location", "Providing_Guidance", "Actionability"]
    assert parsed.missing_dimensions == ["Revealing_of_the_Answer", "Tutor_Tone"]
    assert parsed.unlabelled_metrics == ["answer_leakage", "corrective_tone"]
    assert any("no Revealing_of_the_Answer labels: answer_leakage" in w for w in parsed.warnings)
    first = parsed.responses[0]
    assert [role for role, _ in first.history] == ["tutor", "student", "tutor", "student"]
    assert first.history[2] == ("tutor", "How did you get 12?")
    assert all(set(r.labels) == {"mistake_recognize", "step_scaffolded", "actionability"} for r in parsed.responses)
    with_bom = parse_labelled_file(b"\xef\xbb\xbf" + bea_dev_text().encode())  # a byte-order mark is read too
    assert [r.external_id for r in with_bom.responses] == [r.external_id for r in parsed.responses]


def test_judge_input_never_gets_placeholders_or_a_whole_solution():
    from annotation.judge_validation.importing import judge_input

    parsed = parse_labelled_file(mrbench_v1_text())
    eggs, polygon = parsed.responses[0], parsed.responses[-1]
    given = judge_input(eggs)
    assert "Not Available" not in given["problem"] and given["answer"] == "18"
    assert given["solution"].startswith("Janet sells") and "\n" not in given["answer"]
    polygon_input = judge_input(polygon)
    assert "Not Available" not in json.dumps(polygon_input)
    assert polygon_input["answer"] == NOT_GIVEN_ANSWER and "4.5A.Geometric Lines" in polygon_input["problem"]


@pytest.mark.parametrize(
    "text, cause",
    [
        ('{"conversation_id": "1"}', "a JSON list of dialogues; it holds one object"),
        ("[]", "empty list"),
        ('[{"conversation_id": "7", "responses": {}}]', "record 1 \\(7\\): no tutor responses .*keys are"),
        (
            json.dumps([MRBENCH_V1[0], BEA_DEV[0]]),
            "record 2 \\(1430-abc\\): uses tutor_responses while the records before it use anno_llm_responses",
        ),
        (
            json.dumps(
                [{"conversation_id": "9", "conversation_history": "", "tutor_responses": {"A": {"response": "x"}}}]
            ),
            "carry no annotation.*BEA 2025 test set",
        ),
        (
            json.dumps(
                [
                    {
                        "conversation_id": "9",
                        "tutor_responses": {"GPT4": {"response": "x", "annotation": {"Actionability": "Maybe"}}},
                    }
                ]
            ),
            "record 1 \\(9\\), tutor GPT4, Actionability: 'Maybe' is not a published label",
        ),
        ("[" * 200 + "]" * 200, "nested too deeply"),
        ("[{", "not valid JSON"),
        (b"\xff\xfe[1]", "not UTF-8 text"),
        (
            '[{"conversation_id": "1", "tutor_responses": {"GPT4": {"response": "a"}, "GPT4": {"response": "b"}}}]',
            "repeats the key 'GPT4'",
        ),
        ("\n".join(json.dumps(r) for r in BEA_DEV), "more than one JSON value \\(JSON Lines\\?\\)"),
        (
            json.dumps([{"conversation_id": "7" * 300, "tutor_responses": {"A": {"response": "x", "annotation": {}}}}]),
            "longer than 200 characters",
        ),
    ],
)
def test_unreadable_files_name_the_real_cause(text, cause):
    with pytest.raises(MRBenchError, match=cause):
        parse_labelled_file(text)


@pytest.mark.django_db
def test_imports_through_api_page_and_command_show_the_files_counts(researcher_client, researcher, tmp_path):
    api = researcher_client.post(
        reverse("annotation-jv-mrbench"),
        {"file": SimpleUploadedFile("MRBench_V1.json", mrbench_v1_text().encode(), "application/json")},
    )
    assert api.status_code == 201, api.content
    assert api.json()["items"] == 8 and any("291616268" in w for w in api.json()["warnings"])
    out = StringIO()
    path = tmp_path / "bea_dev.json"
    path.write_text(bea_dev_text())
    call_command("judge_validation_import", str(path), stdout=out)
    assert "5 tutor responses from 2 dialogues" in out.getvalue()
    assert "Not in the file: Revealing_of_the_Answer, Tutor_Tone." in out.getvalue()
    page = researcher_client.post(
        reverse("annotation:judge-validations"),
        {"file": SimpleUploadedFile("again.json", mrbench_v1_text().encode(), "application/json")},
        follow=True,
    )
    assert "Imported 8 labelled tutor responses from 3 dialogues" in page.content.decode()

    for records, project in (
        (MRBENCH_V1, AnnotationProject.objects.get(pk=api.json()["project"])),
        (BEA_DEV, AnnotationProject.objects.get(options__filename="bea_dev.json")),
    ):
        assert project.items.count() == len(responses_of(records))
        report = researcher_client.get(reverse("annotation-jv-report", args=[project.pk])).json()
        dimensions, tutors = file_counts(records)
        assert report["imported"]["counts"]["dimensions"] == dimensions
        assert report["imported"]["counts"]["tutors"] == tutors
        assert [row["metric"] for row in report["imported"]["mapping"]] == [
            "mistake_recognize",
            "answer_leakage",
            "step_scaffolded",
            "actionability",
            "corrective_tone",
        ]
        html = researcher_client.get(reverse("annotation:judge-validation", args=[project.pk])).content.decode()
        assert "Mapping: file dimension → rubric metric" in html and "Yes (but the answer is incorrect)" in html
        for tutor, row in tutors.items():
            assert f'<th scope="row">{tutor}</th><td>{row["responses"]}</td>' in html

    bea = AnnotationProject.objects.get(options__filename="bea_dev.json")
    html = researcher_client.get(reverse("annotation:judge-validation", args=[bea.pk])).content.decode()
    assert "Not in the file: Revealing_of_the_Answer, Tutor_Tone" in html


@pytest.mark.django_db
def test_the_api_and_the_page_refuse_a_bad_file_with_its_cause(researcher_client):
    bea_test_set = json.dumps([{"conversation_id": "1", "tutor_responses": {"GPT4": {"response": "Hi"}}}])
    api = researcher_client.post(
        reverse("annotation-jv-mrbench"), {"file": SimpleUploadedFile("test.json", bea_test_set.encode())}
    )
    assert api.status_code == 400 and "carry no annotation" in api.json()["file"]
    page = researcher_client.post(
        reverse("annotation:judge-validations"),
        {"file": SimpleUploadedFile("flat.json", b'{"conversation_id": "1"}')},
        follow=True,
    )
    assert page.status_code == 200 and "Not imported: the file must hold a JSON list" in page.content.decode()
    with override_settings(UPLOAD_MAX_BYTES={"items": 100, "questions": 100}):
        big = mrbench_v1_text().encode()
        api = researcher_client.post(reverse("annotation-jv-mrbench"), {"file": SimpleUploadedFile("v1.json", big)})
        assert api.status_code == 400 and "the largest item file accepted is" in api.json()["file"][0]
        page = researcher_client.post(
            reverse("annotation:judge-validations"), {"file": SimpleUploadedFile("v1.json", big)}, follow=True
        )
        assert "the largest item file accepted is" in page.content.decode()
    assert not AnnotationProject.objects.filter(kind=AnnotationProject.Kind.JUDGE_VALIDATION).exists()


@pytest.mark.django_db
def test_the_command_names_a_missing_or_bad_file(tmp_path):
    with pytest.raises(CommandError, match="Cannot read"):
        call_command("judge_validation_import", str(tmp_path / "absent.json"))
    bad = tmp_path / "bad.json"
    bad.write_text('[{"conversation_id": "1", "Split": "test"}]')
    with pytest.raises(CommandError, match="no tutor responses"):
        call_command("judge_validation_import", str(bad))


def _judge(project, values: dict[int, dict[str, int]], name: str):
    rubric = RubricVersion.objects.get(pk=project.options["rubric_version_id"])
    validation = judge_validation_create(project=project, rubric=rubric, judge_name=name)
    # Several judges without an endpoint: distinct by rubric is not enough, so give each its own fake id.
    validation.judge_endpoint_id = 10_000 + validation.pk
    validation.save(update_fields=["judge_endpoint_id"])
    JudgeScore.objects.bulk_create(
        JudgeScore(validation=validation, item_id=item, metric=metric, value=value, status="ok")
        for item, by_metric in values.items()
        for metric, value in by_metric.items()
    )
    return validation


@pytest.mark.django_db
def test_imported_labels_never_pass_missing_metrics_are_left_out_and_differences_link(researcher_client, researcher):
    project = labelled_file_import(data=bea_dev_text(), filename="bea_dev.json", by=researcher)
    gold = {(g.item_id, g.question.key): int(g.value) for g in GoldLabel.objects.filter(item__project=project)}
    items = sorted({item for item, _ in gold})
    metrics = ("mistake_recognize", "answer_leakage", "step_scaffolded", "actionability", "corrective_tone")
    perfect = _judge(project, {i: {m: gold.get((i, m), 1) for m in metrics} for i in items}, "equal to the file")
    constant = _judge(project, {i: dict.fromkeys(metrics, 0) for i in items}, "always 0")
    report = researcher_client.get(reverse("annotation-jv-report", args=[project.pk])).json()
    for row in report["metrics"]:
        good, flat = row["judges"][str(perfect.pk)], row["judges"][str(constant.pk)]
        if row["metric"] in ("answer_leakage", "corrective_tone"):
            assert good["verdict"]["outcome"] == flat["verdict"]["outcome"] == NOT_LABELLED
            assert "no usable" in good["verdict"]["reasons"][0] and row["n_consensus"] == 0
            continue
        assert good["kappa_linear"]["value"] == pytest.approx(1.0)
        assert good["verdict"]["outcome"] == "undecided" and HUMAN_RELIABILITY_UNKNOWN in good["verdict"]["reasons"]
        assert flat["kappa_linear"]["value"] == pytest.approx(0.0) and flat["verdict"]["outcome"] == "fail"
        assert "95 % CI" in flat["verdict"]["kappa"]
        for difference in flat["largest_differences"]:
            source = difference["source"]
            assert source["conversation_id"] in ("1430-abc", "2211-def") and source["tutor"]
            assert source["link"].endswith(f"?item={difference['item']}")
    some = next(d for row in report["metrics"] for d in row["judges"][str(constant.pk)]["largest_differences"])
    page = researcher_client.get(some["source"]["link"])
    assert page.status_code == 200 and some["source"]["external_id"] in page.content.decode()
    report_url = reverse("annotation:judge-validation", args=[project.pk])
    for bad in ("x", "-1", "9" * 30, "999999"):
        assert researcher_client.get(f"{report_url}?item={bad}").status_code == 404
    html = researcher_client.get(reverse("annotation:judge-validation", args=[project.pk])).content.decode()
    assert f'href="{some["source"]["link"]}"' in html and "conversation 1430-abc" in html
    flat_kappa = next(r for r in report["metrics"] if r["metric"] == "actionability")["judges"][str(constant.pk)]
    assert flat_kappa["verdict"]["kappa"] in html and "human reliability unknown" in html

    # The labels exports hold every imported label as the items' consensus.
    records = [json.loads(line) for line in exports.labels_jsonl(project).splitlines()]
    assert len(records) == len(gold) and {r["record"] for r in records} == {"imported"}
    assert all(r["final_value"] == r["value"] and r["annotator"] is None for r in records)
    rows = list(csv.DictReader(io.StringIO(exports.labels_csv(project))))
    assert Counter((r["external_id"], r["question"]) for r in rows) == Counter(
        (project.items.get(pk=i).external_id, m) for i, m in gold
    )
