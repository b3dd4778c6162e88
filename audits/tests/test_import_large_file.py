"""A 50 MB file is imported without being held in memory at once: JSONL line by line, a JSON object with ijson.

Peak Python memory (tracemalloc) during the whole import must stay well below the file's size.
"""

import tracemalloc

import pytest

from audits.models import Question, QuestionImport
from audits.services.questionbank import question_import_from_path
from audits.tests.questionbank_files import write_generic_jsonl, write_socrateach

pytestmark = [pytest.mark.django_db, pytest.mark.slow]

FIFTY_MB = 50 * 1024 * 1024
PEAK_LIMIT = 20 * 1024 * 1024


def import_measuring_peak(source: str, path) -> tuple[QuestionImport, int]:
    tracemalloc.start()
    try:
        question_import = question_import_from_path(source=source, path=path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return question_import, peak


def test_fifty_megabyte_jsonl_is_streamed(tmp_path):
    path = tmp_path / "big.jsonl"
    write_generic_jsonl(path, 10_000, padding=5_300)
    assert path.stat().st_size >= FIFTY_MB
    question_import, peak = import_measuring_peak("jsonl", path)
    assert question_import.status == QuestionImport.Status.DONE, question_import.error
    assert question_import.questions_created == 10_000
    assert peak < PEAK_LIMIT, f"peak {peak / 2**20:.1f} MiB for a {path.stat().st_size / 2**20:.0f} MiB file"


def test_fifty_megabyte_socrateach_object_is_streamed(tmp_path):
    path = tmp_path / "big_socrateach.json"
    expected = write_socrateach(path, {"pass": 10, "1": 5_000}, padding=10_500)
    assert path.stat().st_size >= FIFTY_MB
    question_import, peak = import_measuring_peak("socrateach", path)
    assert question_import.status == QuestionImport.Status.DONE, question_import.error
    assert [step["count"] for step in question_import.funnel[:6]] == expected
    assert Question.objects.count() == 10
    assert peak < PEAK_LIMIT, f"peak {peak / 2**20:.1f} MiB for a {path.stat().st_size / 2**20:.0f} MiB file"
