"""The Label Studio import's memory stays a small multiple of the file: the export is read one task at a time at each
pass (read, check, write) instead of as the decoded list beside a record of every task, and the API's JSON body, whose
`content` is one long string, is depth-checked without a regex frame per character. Measured in a fresh process, a 5 MB
export of 30,000 small tasks sent as `content` took 632 MB (about 520 MB in the body's depth check, 80 MB in the import
itself); it now takes 38 MB, 6 MB of it in the import. The decoded tasks are the ones json.loads gives, and a file that
is not one valid list gets json.loads' own message."""

import json
import subprocess
import sys
import textwrap
import tracemalloc
from pathlib import Path

import pytest

from annotation.label_studio.importing import LabelStudioImportFailed, label_studio_import
from annotation.services.projects import project_create, question_create, stage_create
from edufair_web.json_input import JSONArray, JSONInputError, loads, loads_array

from .main_setup import YES_NO

ROOT = Path(__file__).resolve().parents[2]
MIB = 2**20
# Small tasks are the costliest per byte: each is a few Python objects for about 170 bytes of file.
TASKS = 20_000
CHECKED_TASKS = 4_000  # fewer where tracemalloc traces the import (it slows every allocation)


def small_tasks(count: int, last_category: str = "A") -> list[dict]:
    region = {"from_name": "q1", "to_name": "item", "type": "choices", "value": {"choices": ["yes"]}}
    return [
        {
            "id": n,
            "data": {"text": f"Item {n}", "category": last_category if n == count - 1 else "A"},
            "annotations": [{"completed_by": n % 7, "result": [region]}],
        }
        for n in range(count)
    ]


# A fresh interpreter without Django (the reading is pure), so that its peak RSS belongs to these steps alone.
READING_PROBE = textwrap.dedent(
    """
    import json, sys
    from annotation.label_studio.config import ChoiceQuestion
    from annotation.label_studio.reading import read_label_studio_export
    from edufair_web.json_input import MAX_DEPTH, loads_array, nesting_depth

    def peak_kib():
        with open("/proc/self/status") as status:
            return next(int(line.split()[1]) for line in status if line.startswith("VmHWM"))

    body = sys.stdin.buffer.read()  # the API's JSON body: {"content": "<the export as text>"}
    with open("/proc/self/clear_refs", "w") as refs:
        refs.write("5")  # the peak RSS starts again from the RSS now
    before = peak_kib()
    depth = nesting_depth(body, MAX_DEPTH)  # the API's JSON parser checks the body first
    content = json.loads(body)["content"]
    questions = {"q1": ChoiceQuestion(key="q1", prompt="Q1?", choices=(("yes", "Yes"), ("no", "No")))}
    read = read_label_studio_export(loads_array(content), questions)
    labels = sum(len(task.annotations) for task in read.tasks)  # one pass over the tasks, as the check makes
    grown_mib = (peak_kib() - before) / 1024
    print(json.dumps({"depth": depth, "errors": read.errors, "labels": labels, "grown_mib": grown_mib}))
    """
)


def test_an_export_sent_as_the_apis_content_is_checked_and_read_in_a_few_times_its_size():
    content = json.dumps(small_tasks(TASKS))
    body = json.dumps({"content": content}).encode()
    probe = subprocess.run(
        [sys.executable, "-c", READING_PROBE], input=body, capture_output=True, cwd=ROOT, timeout=120
    )
    assert probe.returncode == 0, probe.stderr.decode()[-3000:]
    result = json.loads(probe.stdout)
    assert (result["depth"], result["errors"], result["labels"]) == (1, [], TASKS)
    # The body, its content decoded once more (as DRF does), a copy of the content for its own depth check and the ids
    # seen so far (about 150 bytes per task): well under 4 times the file. The old reading took about 16 times the file
    # (the decoded list, and every task's records beside it), the body's depth check about 115 times.
    size_mib = len(content) / MIB
    assert result["grown_mib"] < 4 * size_mib + 8, (result, size_mib)


@pytest.mark.django_db
def test_an_export_refused_at_its_last_task_is_read_and_checked_whole_in_a_few_times_its_size():
    project = project_create(name="Memory", categories=["A", "B"])
    question = question_create(project=project, key="q1", prompt="Question q1?", choices=YES_NO)
    stage_create(project=project, name="Stage 1", questions=[question], overlap=2)
    content = json.dumps(small_tasks(CHECKED_TASKS, last_category="Z")).encode()
    started = not tracemalloc.is_tracing()
    if started:
        tracemalloc.start()
    tracemalloc.reset_peak()
    before = tracemalloc.get_traced_memory()[0]
    try:
        with pytest.raises(LabelStudioImportFailed) as refused:
            label_studio_import(project=project, content=content)
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        if started:
            tracemalloc.stop()
    assert refused.value.errors == [
        f"task {CHECKED_TASKS} (id {CHECKED_TASKS - 1}): category 'Z' is not a category of the project"
    ]
    # The text decoded from the bytes once (the file's size), the ids seen (about 150 bytes per task) and one task at a
    # time; the old import held the decoded list and every task's records at once, about 15 times the file.
    assert peak < 3 * len(content), (peak / MIB, len(content) / MIB)


# -- the elements are json.loads' own, and so are the errors --------------------------------------------------------

ODD_BUT_VALID = [
    " [ ] ",
    '[1, 2 , {"a": "]", "b": [true, null]}]\n',
    "[NaN, Infinity, -0.0, 1e400, 12345678901234567890]",
    '[{"a": 1, "a": 2}]',
    '["\\u00e9\\ud83d\\ude00", "é", "😀", {"中": "\\ud800"}]',
    "[1,\r\n\t2]",
    '["\ud800", "a lone surrogate, as text"]',
    '{"tasks": []}',
    '"a string"',
]
INVALID = ["", "[", "[1", "[1,]", "[1 2]", "[1,,2]", "[,1]", "[1] [2]", "[1]x", "[tru]", '["a\\x"]']
INVALID.append("[" + "9" * 5000 + "]")  # more digits than int() converts


def _decoded(loader, data):
    try:
        value = loader(data)
    except JSONInputError as error:
        return "error", str(error)
    return "value", repr(list(value) if isinstance(value, JSONArray) else value)


@pytest.mark.parametrize("text", ODD_BUT_VALID + INVALID, ids=lambda text: text[:24])
def test_a_file_read_task_by_task_decodes_as_json_loads_does(text):
    encoded = text.encode("utf-8", "surrogatepass")
    for data in (text, encoded, b"\xef\xbb\xbf" + encoded, text.encode("utf-16", "surrogatepass")):
        assert _decoded(loads_array, data) == _decoded(loads, data), data


def test_a_list_comes_back_as_its_elements_decoded_again_at_each_read():
    elements = loads_array('[{"n": 1}, "é", [2]]'.encode())
    assert isinstance(elements, JSONArray) and len(elements) == 3
    assert (elements[0], elements[-1], elements[1:]) == ({"n": 1}, [2], ["é", [2]])
    assert list(elements) == [{"n": 1}, "é", [2]]
    assert elements[0] is not elements[0]  # decoded at each read: nothing is kept but the text
    with pytest.raises(IndexError):
        elements[3]
