"""Hostile files against the question-bank importers (generic JSONL/JSON/CSV, SciQ, SocraTeach): truncated
files, fields of the wrong type, huge fields, deeply nested JSON, other encodings and random bytes.

Each must end the same way: the import is `failed` with a clear error (a sentence about the file, naming the
line, record or field where the importer can — not "internal error" and not an exception escaping to the
caller), and nothing is written to the bank. Hypothesis generates the files, with a bounded number of
examples per property so the file runs in seconds.
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from audits.models import Question, QuestionImport
from audits.services.questionbank import question_import_from_path
from audits.tests.questionbank_files import generic_record, sciq_items

pytestmark = pytest.mark.django_db

BOUNDED = settings(
    max_examples=12,
    deadline=None,
    database=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)
SOURCES = ("jsonl", "csv", "sciq", "socrateach")


def rejected(source: str, content: bytes, filename: str) -> QuestionImport:
    """Import `content` and assert the clean rejection; returns the failed import."""
    before = Question.objects.count()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / filename
        path.write_bytes(content)
        question_import = question_import_from_path(source=source, path=path)
    assert question_import.status == QuestionImport.Status.FAILED, (source, content[:200])
    assert question_import.questions_created == 0
    assert question_import.error.strip(), "a failed import says why"
    assert not question_import.error.startswith("internal error"), question_import.error
    assert Question.objects.count() == before, "a rejected file wrote questions"
    return question_import


def generic_lines(count: int) -> list[str]:
    return [json.dumps(generic_record(number)) for number in range(count)]


def sciq_file(count: int) -> str:
    return json.dumps(sciq_items(count))


def socrateach_file(count: int) -> str:
    problems = {
        f"p{number}": {
            "question": f"What is {number} + 1000?",
            "analysis": "Add.",
            "answer": str(1000 + number),
            "steps": ["Add."],
            "dialogues": {},
        }
        for number in range(count)
    }
    return json.dumps(problems)


VALID_FILES = {
    "jsonl": ("q.jsonl", "\n".join(generic_lines(6)) + "\n"),
    "sciq": ("sciq.json", sciq_file(3)),
    "socrateach": ("socrateach.json", socrateach_file(4)),
}

# --- Wrong types ------------------------------------------------------------------------------------

NOT_TEXT = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=3),
)
NOT_AN_ANSWER = st.one_of(
    st.none(), st.booleans(), st.lists(st.text(max_size=3), max_size=3), st.dictionaries(st.text(max_size=3), st.none())
)
NOT_A_LIST_OF_TEXTS = st.one_of(st.text(max_size=5), st.integers(), st.lists(st.integers(), min_size=1, max_size=3))


@BOUNDED
@given(
    line=st.integers(min_value=0, max_value=5),
    field_and_value=st.one_of(
        st.tuples(st.sampled_from(["domain", "text"]), NOT_TEXT),
        st.tuples(st.just("answer"), NOT_AN_ANSWER),
        st.tuples(st.just("choices"), NOT_A_LIST_OF_TEXTS),
        st.tuples(st.just("metadata"), st.one_of(st.text(min_size=1, max_size=5), st.lists(st.integers(), min_size=1))),
    ),
)
def test_generic_record_with_a_field_of_the_wrong_type(line, field_and_value):
    field, value = field_and_value
    records = [generic_record(number) for number in range(6)]
    records[line][field] = value
    content = "\n".join(json.dumps(record) for record in records) + "\n"
    failed = rejected("jsonl", content.encode(), "typed.jsonl")
    assert f"line {line + 1}" in failed.error and f"'{field}'" in failed.error, failed.error


@BOUNDED
@given(
    value=st.one_of(st.integers(), st.lists(st.text(max_size=3), max_size=2), st.none(), st.booleans()),
    field=st.sampled_from(["question", "correct_answer"]),
)
def test_sciq_item_with_a_field_of_the_wrong_type(value, field):
    # An answer may be a number (records.require_answer keeps its JSON spelling); a boolean may not.
    assume(not (field == "correct_answer" and isinstance(value, int) and not isinstance(value, bool)))
    items = sciq_items(2)
    items[1][field] = value
    rejected("sciq", json.dumps(items).encode(), "sciq.json")


@BOUNDED
@given(value=st.one_of(st.integers(), st.lists(st.integers(), max_size=2), st.none(), st.text(max_size=3)))
def test_socrateach_problem_that_is_not_an_object(value):
    problems = json.loads(socrateach_file(3))
    problems["p1"] = value
    rejected("socrateach", json.dumps(problems).encode(), "socrateach.json")


# --- Truncated files --------------------------------------------------------------------------------


@BOUNDED
@given(source=st.sampled_from(sorted(VALID_FILES)), fraction=st.floats(min_value=0.02, max_value=0.98))
def test_truncated_file(source, fraction):
    filename, text = VALID_FILES[source]
    cut = int(len(text.rstrip()) * fraction)
    if source == "jsonl":
        # A cut at the end of a line leaves a shorter, valid file: move the cut inside the record.
        while cut > 0 and text[cut - 1] in "}\n \t":
            cut -= 1
    rejected(source, text[:cut].encode(), filename)


def test_csv_cut_in_the_middle_of_a_row():
    header = "id,domain,text,answer\n"
    rows = "".join(f"c{n},physics,Question {n},{n}\n" for n in range(5))
    truncated = header + rows + "c9,physics"
    failed = rejected("csv", truncated.encode(), "cut.csv")
    assert "row 7" in failed.error or "line 7" in failed.error, failed.error


# --- Huge fields, deep nesting ----------------------------------------------------------------------


@pytest.mark.parametrize("source", ["jsonl", "csv", "sciq", "socrateach"])
def test_huge_field(source):
    huge = "x" * (3 * 1024 * 1024)
    if source == "jsonl":
        record = {**generic_record(1), "text": huge}
        content, filename = json.dumps(record) + "\n", "huge.jsonl"
    elif source == "csv":
        content, filename = f"id,domain,text,answer\nh1,physics,{huge},1\n", "huge.csv"
    elif source == "sciq":
        items = sciq_items(1)
        items[0]["support"] = huge
        content, filename = json.dumps(items), "huge.json"
    else:
        problems = json.loads(socrateach_file(2))
        problems["p0"]["question"] = huge
        content, filename = json.dumps(problems), "huge.json"
    failed = rejected(source, content.encode(), filename)
    # The field's own limit, or (a 3 MB field makes a 3 MB record) the record's: a record may be at most …
    assert "limit" in failed.error or "a record may be at most" in failed.error, failed.error


@pytest.mark.parametrize("source", ["jsonl", "sciq", "socrateach"])
@pytest.mark.parametrize("depth", [200, 50_000])
def test_deeply_nested_json(source, depth):
    nested = "[" * depth + "]" * depth
    if source == "jsonl":
        record = json.dumps(generic_record(1))[:-1] + f', "metadata": {{"deep": {nested}}}}}'
        content, filename = record + "\n", "deep.jsonl"  # both depths pass json_input.MAX_DEPTH
    elif source == "sciq":
        content, filename = f"[{nested}]", "deep.json"
    else:
        content, filename = f'{{"p0": {nested}}}', "deep.json"
    started = time.perf_counter()
    failed = rejected(source, content.encode(), filename)
    # Refused on the parser's events, before the nested value is built (which took 20 s and 6 GB).
    assert "nested too deeply" in failed.error, failed.error
    assert time.perf_counter() - started < 5


# --- Encodings, random bytes ------------------------------------------------------------------------


@pytest.mark.parametrize("encoding", ["utf-16", "utf-32", "latin-1", "cp1252"])
@pytest.mark.parametrize("source", SOURCES)
def test_wrong_encoding(source, encoding):
    text = {
        "jsonl": json.dumps({**generic_record(1), "text": "Größe: wie viel wiegt ein Würfel?"}, ensure_ascii=False),
        "csv": "id,domain,text,answer\ne1,physics,Größe eines Würfels?,8\n",
        "sciq": json.dumps([{**sciq_items(1)[0], "question": "Größe eines Würfels?"}], ensure_ascii=False),
        "socrateach": json.dumps(
            {"p0": {**json.loads(socrateach_file(1))["p0"], "question": "Größe eines Würfels?"}}, ensure_ascii=False
        ),
    }[source]
    failed = rejected(source, text.encode(encoding), f"encoded.{'csv' if source == 'csv' else 'json'}")
    assert "UTF-8" in failed.error, failed.error


@BOUNDED
@given(source=st.sampled_from(SOURCES), content=st.binary(min_size=1, max_size=400))
def test_random_bytes(source, content):
    rejected(source, content, "random.csv" if source == "csv" else "random.json")


@pytest.mark.parametrize("source", ["jsonl", "sciq", "socrateach"])
def test_a_nul_character_is_refused_with_its_field(source):
    """PostgreSQL stores no NUL in text or JSON; found by this drill's random bytes on PostgreSQL."""
    if source == "jsonl":
        record = {"domain": "physics", "text": "What is g?", "answer": "9.8", "metadata": {"note": "a\x00b"}}
        content, name, field = json.dumps(record) + "\n", "nul.jsonl", "metadata"
    elif source == "sciq":
        items = sciq_items(1)
        items[0]["support"] = "bad \x00 byte"
        content, name, field = json.dumps(items), "nul.json", "support"
    else:
        problems = json.loads(socrateach_file(2))
        first = next(iter(problems))
        problems[first]["question"] = "x\x00y"
        content, name, field = json.dumps(problems), "nul.json", "question"
    failed = rejected(source, content.encode(), name)
    assert "NUL" in failed.error and f"'{field}'" in failed.error, failed.error


def test_an_error_quoting_a_nul_byte_is_stored():
    failed = rejected("jsonl", b" \x00\x00 not a question file", "nul.jsonl")
    assert "\x00" not in failed.error and "\\x00" in failed.error
