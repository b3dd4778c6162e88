"""The labelled-file reader takes the published files in the shapes they are found in, and refuses the rest
with a 400 naming the cause: keys in another case or spelling, labels left empty, tutor entries left empty,
responses lacking a dimension, a repeated conversation id with no Split, and a file the size of the BEA 2025
dev set (300 dialogues, 2,476 responses, a few MB) through the API under the configured upload limit; the
file may also be the request body itself. Text no database stores and tutor names that collide are refused,
never a 500; quoted values in an error are cut short."""

import json
from collections import Counter

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import override_settings
from django.urls import reverse

from annotation.judge_validation.importing import labelled_file_import
from annotation.judge_validation.mrbench import MRBenchError, parse_labelled_file
from annotation.models import AnnotationProject, GoldLabel
from edufair_web.upload_limits import upload_limit

from .judge_validation_excerpts import BEA_DEV, bea_at_scale, responses_of


def _variant() -> list[dict]:
    """The BEA excerpt as files are found: keys in other cases and spellings, an empty label, an empty
    tutor entry, a response without text, a response lacking a dimension, the first dialogue repeated."""
    records = json.loads(json.dumps(BEA_DEV))
    sonnet = records[0]["tutor_responses"]["Sonnet"]
    records[0]["tutor_responses"]["Sonnet"] = {
        "Response": sonnet["response"],
        "Annotation": {
            "mistake identification": "yes",
            "Mistake-Location": None,
            "PROVIDING_GUIDANCE": "Not Available",
            "actionability": "To Some Extent",
        },
    }
    del records[0]["tutor_responses"]["Gemini"]["annotation"]["Mistake_Location"]
    records[1]["tutor_responses"]["Phi3"] = {"response": "", "annotation": {"Actionability": "No"}}
    records[1]["tutor_responses"]["Mistral"] = None
    records.append({**records[1], "tutor_responses": {"GPT4": {"response": "Count again.", "annotation": {}}}})
    records[2]["CONVERSATION_ID"] = records[2].pop("conversation_id")
    return records


def test_keys_in_any_case_and_empty_labels_or_entries_are_read_and_stated():
    parsed = parse_labelled_file(json.dumps(_variant()))
    assert [r.external_id for r in parsed.responses] == [
        "1430-abc:Sonnet",
        "1430-abc:Llama318B",
        "1430-abc:Gemini",
        "2211-def/r2:Expert",
        "2211-def/r2:Novice",
        "2211-def/r2:Phi3",
        "2211-def/r3:GPT4",  # the same id again without a Split: kept apart by record index
    ]
    sonnet = parsed.responses[0]
    assert sonnet.response.startswith("Adding the denominators")
    assert sonnet.source_labels == {"Mistake_Identification": "yes", "Actionability": "To Some Extent"}
    # Mistake_Location not given: mistake_recognize rests on Mistake_Identification (stated in the mapping).
    assert sonnet.labels == {"mistake_recognize": "2", "actionability": "1"}
    gemini = parsed.responses[2]
    assert "Mistake_Location" not in gemini.source_labels and gemini.labels["mistake_recognize"] == "1"
    phi3 = parsed.responses[5]
    assert phi3.response == "" and phi3.labels == {"actionability": "0"}
    warnings = "\n".join(parsed.warnings)
    assert "3 of the 6 annotated responses carry no Mistake_Location label" in warnings
    assert "2 of the 6 annotated responses carry no Providing_Guidance label" in warnings
    assert "1 of the 6 annotated responses carries no Mistake_Identification label" in warnings
    assert "Mistake_Location 1, Providing_Guidance 1): read as not given" in warnings
    assert "1 response has no text (record 2 (2211-def), tutor Phi3): imported as an empty tutor turn" in warnings
    assert "1 tutor entry is empty (record 2 (2211-def), tutor Mistral)" in warnings
    assert "1 response carries no annotation: imported unlabelled" in warnings


@pytest.mark.parametrize(
    "records, cause",
    [
        (
            [{"conversation_id": "1", "tutor_responses": {"A": {"response": "x\x00", "annotation": {}}}}],
            "record 1 \\(1\\): contains a NUL character",
        ),
        (
            [{"conversation_id": "1", "tutor_responses": {"A": {"response": "\ud800", "annotation": {}}}}],
            "contains a lone surrogate",
        ),
        (
            [
                {
                    "conversation_id": "1",
                    "tutor_responses": {
                        "GPT4": {"response": "a", "annotation": {"Actionability": "No"}},
                        " GPT4": {"response": "b", "annotation": {"Actionability": "No"}},
                    },
                }
            ],
            "tutor GPT4: the same tutor as record 1 \\(1\\), tutor GPT4",
        ),
        (
            [{"conversation_id": "1", "tutor_responses": {"A": {"response": ["x"], "annotation": {}}}}],
            "the response must be text, not list",
        ),
        (
            [{"conversation_id": "1", "tutor_responses": {"A": {"response": "x", "annotation": {"Actionability": 2}}}}],
            "Actionability: 2 is not a published label \\(labels are text\\)",
        ),
        (
            [
                {
                    "conversation_id": "1",
                    "tutor_responses": {
                        "A": {"response": "x", "annotation": {"Tutor_Tone": "Neutral", "tutor tone": "Offensive"}}
                    },
                }
            ],
            "Tutor_Tone is given twice, as two spellings of its key, with two labels",
        ),
    ],
)
def test_what_no_database_stores_or_collides_is_refused_by_name(records, cause):
    with pytest.raises(MRBenchError, match=cause):
        parse_labelled_file(json.dumps(records))


def test_quoted_values_in_an_error_are_cut_short():
    records = [{"conversation_id": "c" * 5000, "tutor_responses": {"A": {"response": "x", "annotation": {}}}}]
    records[0]["tutor_responses"]["A"]["annotation"]["Actionability"] = "L" * 100_000
    with pytest.raises(MRBenchError) as caught:
        parse_labelled_file(json.dumps(records))
    assert len(str(caught.value)) < 500 and "(5000 characters)" in str(caught.value)


@pytest.mark.slow
@pytest.mark.django_db
def test_a_file_the_size_of_the_bea_dev_set_imports_through_the_api(researcher_client):
    records = bea_at_scale()
    data = json.dumps(records, indent=4).encode()
    assert 2_000_000 < len(data) < upload_limit("items")  # a few MB, under the configured item-file limit
    response = researcher_client.post(
        reverse("annotation-jv-mrbench"), {"file": SimpleUploadedFile("mrbench_v3_devset.json", data)}
    )
    assert response.status_code == 201, response.content[:500]
    body = response.json()
    assert body["items"] == len(responses_of(records)) == 2476 and body["import"]["n_records"] == 300
    project = AnnotationProject.objects.get(pk=body["project"])
    assert GoldLabel.objects.filter(item__project=project).count() == 3 * 2476  # 4 dimensions → 3 metrics
    counts = researcher_client.get(reverse("annotation-jv-report", args=[project.pk])).json()["imported"]["counts"]
    expected = Counter(
        (dimension, label) for _, _, annotation in responses_of(records) for dimension, label in annotation.items()
    )
    assert {(d, label): n for d, row in counts["dimensions"].items() for label, n in row.items()} == expected
    assert {t: row["responses"] for t, row in counts["tutors"].items()} == Counter(
        tutor for _, tutor, _ in responses_of(records)
    )


@pytest.mark.django_db
def test_the_api_takes_the_file_as_the_request_body_and_refuses_bad_ones_with_400(researcher_client):
    url = reverse("annotation-jv-mrbench")
    response = researcher_client.post(
        f"{url}?filename=bea_dev.json&name=BEA%20dev", json.dumps(BEA_DEV), content_type="application/json"
    )
    assert response.status_code == 201, response.content
    project = AnnotationProject.objects.get(pk=response.json()["project"])
    assert project.name == "BEA dev" and project.options["filename"] == "bea_dev.json"
    assert project.items.count() == len(responses_of(BEA_DEV))
    # The body as sent: a repeated key is refused, as in an uploaded file, and the other faults name their cause.
    repeated = '[{"conversation_id": "1", "tutor_responses": {"A": {"response": "a"}, "A": {"response": "b"}}}]'
    nul = json.dumps([{"conversation_id": "1", "tutor_responses": {"A": {"response": "x\x00", "annotation": {}}}}])
    clash = json.dumps(
        [
            {
                "conversation_id": "1",
                "tutor_responses": {
                    "A": {"response": "a", "annotation": {"Actionability": "No"}},
                    "A ": {"response": "b", "annotation": {"Actionability": "No"}},
                },
            }
        ]
    )
    for text, cause in (
        (repeated, "repeats the key 'A'"),
        (nul, "NUL character"),
        (clash, "the same tutor as"),
        ('{"file": "x"}', "a JSON list of dialogues; it holds one object"),
        ("[{", "not valid JSON"),
    ):
        refused = researcher_client.post(url, text, content_type="application/json")
        assert refused.status_code == 400 and cause in refused.json()["file"], (cause, refused.content)
        upload = researcher_client.post(url, {"file": SimpleUploadedFile("f.json", text.encode())})
        assert upload.status_code == 400 and cause in upload.json()["file"], (cause, upload.content)
    with override_settings(UPLOAD_MAX_BYTES={"items": 100, "questions": 100}):
        refused = researcher_client.post(url, json.dumps(BEA_DEV), content_type="application/json")
        assert refused.status_code == 400 and "the largest item file accepted is" in refused.json()["file"][0]
    with override_settings(DATA_UPLOAD_MAX_MEMORY_SIZE=100):
        refused = researcher_client.post(url, json.dumps(BEA_DEV), content_type="application/json")
        assert refused.status_code == 400 and "multipart upload" in refused.json()["file"][0]
    page = researcher_client.post(
        reverse("annotation:judge-validations"), {"file": SimpleUploadedFile("f.json", nul.encode())}, follow=True
    )
    assert page.status_code == 200 and "Not imported: record 1 (1): contains a NUL character" in page.content.decode()
    assert AnnotationProject.objects.filter(kind=AnnotationProject.Kind.JUDGE_VALIDATION).count() == 1


@pytest.mark.django_db
def test_the_report_page_links_the_exports_and_label_studio_gets_the_imported_labels(researcher_client, researcher):
    project = labelled_file_import(data=json.dumps(BEA_DEV), filename="bea_dev.json", by=researcher)
    html = researcher_client.get(reverse("annotation:judge-validation", args=[project.pk])).content.decode()
    for fmt in ("csv", "jsonl", "labelstudio-anonymous", "labelstudio-config"):
        link = reverse("annotation:labels-export", args=[project.pk, fmt])
        assert f'href="{link}"' in html
    tasks = researcher_client.get(reverse("annotation:labels-export", args=[project.pk, "labelstudio-anonymous"]))
    gold = {
        (g.item.external_id, g.question.key): g.value
        for g in GoldLabel.objects.filter(item__project=project).select_related("item", "question")
    }
    exported = {
        (task["data"]["external_id"], region["from_name"]): region["value"]["choices"][0]
        for task in json.loads(tasks.content)
        for annotation in task["annotations"]
        if annotation["ground_truth"]
        for region in annotation["result"]
        if region["type"] == "choices"
    }
    assert exported == gold and len(gold) == 3 * len(responses_of(BEA_DEV))
