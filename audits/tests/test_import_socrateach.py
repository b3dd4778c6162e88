"""SocraTeach importer: EduFair-Bench's four filter rules, rule by rule, on the sample and on a generated file."""

import json

import pytest

from audits.models import Question, QuestionImport
from audits.questionbank.socrateach import Round, SocraTeachFilter, discloses_answer, judge_dialogue, reply_labels
from audits.services.questionbank import question_import_from_path
from audits.tests.questionbank_files import SAMPLES, SOCRATEACH_SAMPLE_FUNNEL, write_socrateach

pytestmark = pytest.mark.django_db


def funnel_counts(question_import: QuestionImport) -> list[int]:
    return [step["count"] for step in question_import.funnel if step["step"] not in ("new in bank", "already in bank")]


def test_sample_funnel_rule_by_rule():
    question_import = question_import_from_path(source="socrateach", path=SAMPLES / "socrateach_multi_sample.json")
    assert question_import.status == QuestionImport.Status.DONE, question_import.error
    # dialogues in, ≥ 4 exchanges, ≥ 2 errors, ≥ 1 correct after the last error, no disclosure, problems kept
    assert funnel_counts(question_import) == SOCRATEACH_SAMPLE_FUNNEL
    assert question_import.questions_created == 5
    kept = set(Question.objects.filter(source="socrateach").values_list("source_id", flat=True))
    assert kept == {"st-0001", "st-0002", "st-0003", "st-0004", "st-0012"}


def test_reference_dialogue_is_the_first_passing_dialogue():
    question_import_from_path(source="socrateach", path=SAMPLES / "socrateach_multi_sample.json")
    question = Question.objects.get(source="socrateach", source_id="st-0002")
    # Dialogue d1 of st-0002 has only three exchanges; d2 passes and becomes the reference.
    assert question.metadata["reference_dialogue_id"] == "d2"
    assert question.domain == "mathematics"
    assert question.answer == "15"
    assert question.solution.startswith("The notebooks cost")
    assert question.reference_dialogue[0] == {"role": "tutor", "text": "What do the three notebooks cost together?"}
    assert [turn["label"] for turn in question.reference_dialogue if turn["role"] == "student"] == [
        "error", "correct", "error", "correct", "correct",
    ]  # fmt: skip


def test_generated_file_funnel(tmp_path):
    path = tmp_path / "socrateach_generated.json"
    expected = write_socrateach(path, {"pass": 37, "1": 11, "2": 13, "3": 7, "4": 5})
    question_import = question_import_from_path(source="socrateach", path=path)
    assert funnel_counts(question_import) == expected == [73, 62, 49, 42, 37, 37]


def test_thresholds_are_parameters(tmp_path):
    path = tmp_path / "socrateach_generated.json"
    write_socrateach(path, {"pass": 4, "1": 3, "2": 2, "3": 1, "4": 1})
    # Rule 1 off (0 exchanges), rule 2 at one error, disclosure allowed: the short dialogues (one error,
    # then a correct reply) and the disclosing one now pass; the error-free ones (2) and the one with no
    # correct reply after its last error (1) still fall out: 11 → 11 → 9 → 8 → 8.
    question_import = question_import_from_path(
        source="socrateach",
        path=path,
        parameters={"min_exchanges": 0, "min_student_errors": 1, "forbid_disclosure": False},
    )
    assert funnel_counts(question_import) == [11, 11, 9, 8, 8, 8]
    assert question_import.parameters["applied"]["min_student_errors"] == 1


def _rounds(*pairs):
    return [Round(tutor=tutor, student=student, user_type=label) for tutor, student, label in pairs]


def test_error_reading_is_a_parameter():
    rounds = _rounds(
        ("Start.", "2 + 2 = 5", "incorrect"),
        ("Good try, what next?", "4", "correct"),
        ("Great.", "", None),
    )
    # From labels: one error then one correct reply. From the tutor's feedback alone: "Good try" is not a
    # correction marker, so the first reply is neutral and "Great" marks the second correct.
    assert reply_labels(rounds, SocraTeachFilter(reply_labels="user_type")) == ["error", "correct"]
    assert reply_labels(rounds, SocraTeachFilter(reply_labels="tutor_feedback")) == ["neutral", "correct"]


def test_disclosure_counts_only_before_the_student_says_it():
    said_first = _rounds(("What is 6 x 7?", "It is 42.", None), ("Yes, 42 is right. END", "", None))
    told_first = _rounds(("Hint: the product is 42.", "Oh, 42.", None))
    assert not discloses_answer(said_first, "What is 6 x 7?", "42")
    assert discloses_answer(told_first, "What is 6 x 7?", "42")
    # 42.0 is the same number; 420 is not.
    assert discloses_answer(_rounds(("It comes to 42.0.", "ok", None)), "q", "42")
    assert not discloses_answer(_rounds(("It comes to 420.", "ok", None)), "q", "42")


def test_number_in_the_problem_only_counts_when_stated_as_the_answer():
    question = "Tom has 12 apples and eats none. How many apples does he have?"
    restated = _rounds(("Read again: Tom has 12 apples.", "12", None))
    stated = _rounds(("The answer is 12.", "ok", None))
    assert not discloses_answer(restated, question, "12")
    assert discloses_answer(stated, question, "12")


def test_verdict_reports_the_first_failed_rule():
    rounds = _rounds(("a", "b", "incorrect"), ("c", "d", "incorrect"), ("e", "f", "correct"))
    verdict = judge_dialogue(rounds, "q", "x", SocraTeachFilter())
    assert (verdict.exchanges, verdict.errors, verdict.correct_after_last_error, verdict.failed_rule) == (3, 2, 1, 1)
    assert judge_dialogue(rounds, "q", "x", SocraTeachFilter(min_exchanges=3)).failed_rule is None


def test_problem_without_passing_dialogue_is_not_kept(tmp_path):
    path = tmp_path / "one.json"
    path.write_text(
        json.dumps({"p1": {"question": "q?", "answer": "1", "dialogues": {"d": [{"system": "x", "user": "y"}]}}})
    )
    question_import = question_import_from_path(source="socrateach", path=path)
    assert question_import.status == QuestionImport.Status.DONE
    assert funnel_counts(question_import) == [1, 0, 0, 0, 0, 0]
    assert not Question.objects.exists()
