"""`manage.py import_questions`: imports with a progress bar, prints the funnel, fails loudly on a bad file."""

import io

import pytest
from django.core.management import CommandError, call_command

from audits.models import Question, QuestionImport
from audits.tests.questionbank_files import SAMPLES

pytestmark = pytest.mark.django_db


def test_command_prints_the_funnel_and_is_idempotent():
    out, err = io.StringIO(), io.StringIO()
    call_command("import_questions", str(SAMPLES / "sciq_sample.json"), source="sciq", seed=3, stdout=out, stderr=err)
    text = out.getvalue()
    assert "items in" in text and "42" in text
    assert "new in bank" in text
    assert Question.objects.count() == 28

    out = io.StringIO()
    call_command("import_questions", str(SAMPLES / "sciq_sample.json"), "--source=sciq", "--seed=3", stdout=out,
                 stderr=io.StringIO())  # fmt: skip
    assert Question.objects.count() == 28
    assert "already in bank" in out.getvalue()


def test_command_passes_parameters():
    out = io.StringIO()
    call_command(
        "import_questions", str(SAMPLES / "socrateach_multi_sample.json"), "--source=socrateach",
        "--param", "min_exchanges=5", "--no-progress", stdout=out,
    )  # fmt: skip
    # With ≥ 5 exchanges the sample's five four-exchange dialogues drop out at the first rule too: 14 → 6.
    assert "≥ 5 exchanges" in out.getvalue()
    assert QuestionImport.objects.get().funnel[1] == {"step": "≥ 5 exchanges", "count": 6, "detail": {}}


def test_command_rejects_a_bad_file(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"domain": "physics", "text": "q"}\n')
    with pytest.raises(CommandError, match="line 1, field 'answer'"):
        call_command("import_questions", str(path), source="jsonl", stdout=io.StringIO(), stderr=io.StringIO())
    assert not Question.objects.exists()
