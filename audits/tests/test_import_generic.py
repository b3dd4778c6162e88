"""Generic importer: the documented JSONL / JSON / CSV schema, on the samples and edge cases."""

import json

import pytest

from audits.models import Question, QuestionImport
from audits.questionbank.jsonl import REQUIRED_FIELDS
from audits.services.questionbank import question_import_from_path
from audits.tests.questionbank_files import SAMPLES, write_generic_jsonl

pytestmark = pytest.mark.django_db


def test_jsonl_sample():
    question_import = question_import_from_path(source="jsonl", path=SAMPLES / "generic_sample.jsonl")
    assert question_import.status == QuestionImport.Status.DONE, question_import.error
    assert question_import.questions_created == 8
    median = Question.objects.get(source_id="gen-math-002")
    assert (median.domain, median.answer, median.metadata) == ("mathematics", "7", {"topic": "statistics", "grade": 7})
    factor = Question.objects.get(source_id="gen-math-003")
    assert [turn["role"] for turn in factor.reference_dialogue] == ["tutor", "student", "tutor", "student"]
    assert Question.objects.get(source_id="gen-phys-001").choices == ["15", "20", "30", "60"]


def test_csv_sample_decodes_choices_both_ways():
    question_import = question_import_from_path(source="csv", path=SAMPLES / "generic_sample.csv")
    assert question_import.status == QuestionImport.Status.DONE, question_import.error
    assert question_import.questions_created == 6
    assert Question.objects.get(source_id="gen-csv-003").choices == ["150", "300", "35", "600"]
    assert Question.objects.get(source_id="gen-csv-005").choices == ["4", "6", "12", "14"]


def test_records_without_id_are_identified_by_content(tmp_path):
    path = tmp_path / "no_ids.jsonl"
    record = {"domain": "Physics", "text": "What is 2 + 2?", "answer": 4, "level": "easy"}
    path.write_text(json.dumps(record) + "\n" + json.dumps(record) + "\n")
    question_import = question_import_from_path(source="jsonl", path=path)
    assert [step["count"] for step in question_import.funnel[:2]] == [2, 1]
    question = Question.objects.get()
    assert question.domain == "physics"  # lower-cased
    assert len(question.source_id) == 24
    assert question.metadata == {"extra": {"level": "easy"}}


def test_json_list_is_accepted(tmp_path):
    path = tmp_path / "list.json"
    path.write_text(
        json.dumps(
            [{"domain": "chemistry", "text": "t1", "answer": "a"}, {"domain": "chemistry", "text": "t2", "answer": "b"}]
        )
    )
    assert question_import_from_path(source="jsonl", path=path).questions_created == 2


def test_larger_generated_file(tmp_path):
    path = tmp_path / "generated.jsonl"
    write_generic_jsonl(path, 2500)
    question_import = question_import_from_path(source="jsonl", path=path)
    assert question_import.questions_created == 2500
    assert question_import.funnel[1]["detail"]["per domain"] == {"mathematics": 834, "physics": 833, "chemistry": 833}


def test_required_fields_are_documented():
    from audits.questionbank import jsonl

    for name in REQUIRED_FIELDS:
        assert f"| {name}" in jsonl.__doc__
