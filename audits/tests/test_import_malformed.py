"""A malformed file is rejected whole: the error names the record/line and field, and the bank is unchanged."""

import json

import pytest

from audits.models import Question, QuestionImport
from audits.services.questionbank import question_import_from_path
from audits.tests.questionbank_files import SAMPLES

pytestmark = pytest.mark.django_db


@pytest.fixture
def bank_with_samples():
    question_import_from_path(source="jsonl", path=SAMPLES / "generic_sample.jsonl")
    return set(Question.objects.values_list("id", "source_id", "text"))


def reject(source: str, path, *, bank: set, contains: tuple[str, ...]) -> QuestionImport:
    question_import = question_import_from_path(source=source, path=path)
    assert question_import.status == QuestionImport.Status.FAILED
    assert question_import.questions_created == 0
    for fragment in contains:
        assert fragment in question_import.error, question_import.error
    assert set(Question.objects.values_list("id", "source_id", "text")) == bank
    return question_import


def good_line(number: int) -> str:
    return json.dumps({"id": f"ok-{number}", "domain": "physics", "text": f"q{number}", "answer": "1"})


def test_jsonl_invalid_json_at_line_k(tmp_path, bank_with_samples):
    path = tmp_path / "broken.jsonl"
    lines = [good_line(n) for n in range(1, 7)]
    lines[3] = '{"id": "x", "domain": "physics", "text": "unterminated'
    path.write_text("\n".join(lines) + "\n")
    reject("jsonl", path, bank=bank_with_samples, contains=("line 4", "not valid JSON"))


def test_jsonl_missing_field_at_line_k(tmp_path, bank_with_samples):
    path = tmp_path / "missing.jsonl"
    lines = [good_line(n) for n in range(1, 9)]
    lines[6] = json.dumps({"id": "x", "domain": "physics", "answer": "1"})
    path.write_text("\n".join(lines) + "\n")
    reject("jsonl", path, bank=bank_with_samples, contains=("line 7", "field 'text'", "missing"))


def test_jsonl_wrong_type_at_line_k(tmp_path, bank_with_samples):
    path = tmp_path / "wrong_type.jsonl"
    lines = [good_line(n) for n in range(1, 5)]
    lines[1] = json.dumps({"id": "x", "domain": "physics", "text": "q", "answer": "1", "choices": "a, b"})
    path.write_text("\n".join(lines) + "\n")
    reject("jsonl", path, bank=bank_with_samples, contains=("line 2", "field 'choices'", "list of texts"))


def test_empty_file(tmp_path, bank_with_samples):
    for source in ("jsonl", "csv", "sciq", "socrateach"):
        path = tmp_path / f"empty.{source}"
        path.write_bytes(b"  \n\n")
        reject(source, path, bank=bank_with_samples, contains=("empty",))


def test_wrong_encoding(tmp_path, bank_with_samples):
    path = tmp_path / "latin1.jsonl"
    text = (
        good_line(1)
        + "\n"
        + json.dumps({"id": "x", "domain": "physics", "text": "Température ?", "answer": "1"}, ensure_ascii=False)
        + "\n"
    )
    path.write_bytes(text.encode("latin-1"))
    reject("jsonl", path, bank=bank_with_samples, contains=("line 2", "not UTF-8"))


def test_csv_missing_column_and_bad_cell(tmp_path, bank_with_samples):
    path = tmp_path / "no_answer.csv"
    path.write_text("domain,text\nphysics,q\n")
    reject("csv", path, bank=bank_with_samples, contains=("line 1", "answer"))
    path = tmp_path / "bad_cell.csv"
    path.write_text('id,domain,text,answer,metadata\na,physics,q,1,\nb,physics,q2,2,"{not json"\n')
    reject("csv", path, bank=bank_with_samples, contains=("row 3", "field 'metadata'"))


def test_socrateach_broken_at_record_k(tmp_path, bank_with_samples):
    problems = json.loads((SAMPLES / "socrateach_multi_sample.json").read_text())
    broken = dict(problems)
    broken["st-0005"] = {**problems["st-0005"]}
    del broken["st-0005"]["question"]
    path = tmp_path / "missing_question.json"
    path.write_text(json.dumps(broken))
    reject("socrateach", path, bank=bank_with_samples, contains=("record 5", "st-0005", "field 'question'", "missing"))

    wrong_type = dict(problems)
    wrong_type["st-0003"] = {**problems["st-0003"], "dialogues": ["not", "an", "object"]}
    path.write_text(json.dumps(wrong_type))
    reject("socrateach", path, bank=bank_with_samples, contains=("record 3", "field 'dialogues'"))

    text = json.dumps(problems)
    cut = text.index('"st-0007"')
    path.write_text(text[:cut] + '"st-0007": {"question": "x" "answer": 1}}')
    reject("socrateach", path, bank=bank_with_samples, contains=("record 7", "not valid JSON"))


def test_sciq_wrong_type_at_record_k(tmp_path, bank_with_samples):
    items = json.loads((SAMPLES / "sciq_sample.json").read_text())
    items[9] = {**items[9], "distractor2": ["a", "list"]}
    path = tmp_path / "wrong_type.json"
    path.write_text(json.dumps(items))
    reject("sciq", path, bank=bank_with_samples, contains=("record 10", "field 'distractor2'", "expected text"))


def test_late_error_rejects_the_whole_file(tmp_path, bank_with_samples):
    """999 good records and a bad last one: nothing of the 999 is written."""
    path = tmp_path / "late.jsonl"
    lines = [good_line(n) for n in range(1, 1000)] + ['{"domain": "physics", "text": "q", "answer": true}']
    path.write_text("\n".join(lines) + "\n")
    reject("jsonl", path, bank=bank_with_samples, contains=("line 1000", "field 'answer'"))
