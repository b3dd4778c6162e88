"""Importing the same file twice leaves the bank unchanged; the second import reports everything as known."""

import pytest

from audits.models import Question, QuestionImport
from audits.services.questionbank import question_import_from_path
from audits.tests.questionbank_files import SAMPLES

pytestmark = pytest.mark.django_db

SAMPLE_FILES = [
    ("socrateach", "socrateach_multi_sample.json", 5),
    ("sciq", "sciq_sample.json", 28),
    ("jsonl", "generic_sample.jsonl", 8),
    ("csv", "generic_sample.csv", 6),
]


def bank_snapshot() -> list[tuple]:
    return list(
        Question.objects.order_by("id").values_list(
            "id", "domain", "source", "source_id", "text", "answer", "classifier_confidence", "reference_dialogue"
        )
    )


@pytest.mark.parametrize(("source", "filename", "kept"), SAMPLE_FILES)
def test_second_import_changes_nothing(source, filename, kept):
    first = question_import_from_path(source=source, path=SAMPLES / filename)
    assert (first.questions_created, first.questions_existing) == (kept, 0)
    before = bank_snapshot()

    second = question_import_from_path(source=source, path=SAMPLES / filename)
    assert second.status == QuestionImport.Status.DONE
    assert (second.questions_created, second.questions_existing) == (0, kept)
    assert bank_snapshot() == before
    assert second.funnel[-2:] == [
        {"step": "new in bank", "count": 0, "detail": {}},
        {"step": "already in bank", "count": kept, "detail": {}},
    ]
    # Both imports list the questions (the bank page filters by import).
    assert Question.objects.filter(imports=second).count() == kept


def test_all_samples_together_then_again():
    for source, filename, _ in SAMPLE_FILES:
        question_import_from_path(source=source, path=SAMPLES / filename)
    before = bank_snapshot()
    assert len(before) == sum(kept for *_, kept in SAMPLE_FILES)
    for source, filename, _ in SAMPLE_FILES:
        question_import_from_path(source=source, path=SAMPLES / filename)
    assert bank_snapshot() == before
