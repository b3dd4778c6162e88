"""Bounded input, as a hostile client sends it: nested JSON refused before it is built (and memory stays small),
error lists capped with "… and N more", uploads over the size limit of their kind refused with the limit stated,
a deep JSON body or JSON field answered with a 400 — never a 500."""

import io
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from rest_framework.test import APIClient

from annotation.models import AnnotationProject, Item
from annotation.services.importers import MAX_ERRORS
from audits.models import Question
from edufair_web.json_input import MAX_DEPTH

ROOT = Path(__file__).resolve().parents[2]
# The hostile client's file: 600 KB of nested objects in a JSON list (it drove the web process to 9 GB).
NESTED_OBJECTS = 100_000
NESTED_QUESTION_FILE = "[" + '{"a":' * NESTED_OBJECTS + "1" + "}" * NESTED_OBJECTS + "]"


@pytest.fixture
def researcher_api(researcher):
    client = APIClient(raise_request_exception=False)
    client.force_authenticate(researcher)
    return client


@pytest.fixture
def project(db):
    return AnnotationProject.objects.create(name="bounded input")


def upload(name: str, content: str | bytes) -> io.BytesIO:
    handle = io.BytesIO(content.encode() if isinstance(content, str) else content)
    handle.name = name
    return handle


def post_questions(client, content, name="nested.json", source="jsonl", parameters="{}"):
    data = {"source": source, "file": upload(name, content), "parameters": parameters}
    return client.post("/api/question-imports/", data, format="multipart")


def post_items(client, project, content, fmt="jsonl"):
    data = {"format": fmt, "file": upload(f"items.{fmt}", content)}
    return client.post(f"/api/annotation/projects/{project.pk}/import-items/", data, format="multipart")


# -- nesting depth ---------------------------------------------------------------------------------------------


def test_the_600_kb_nested_question_file_is_refused_with_a_400(researcher_api):
    assert len(NESTED_QUESTION_FILE) > 600_000
    response = post_questions(researcher_api, NESTED_QUESTION_FILE)
    assert response.status_code == 400
    assert response.json()["status"] == "failed"
    assert f"nested too deeply (more than {MAX_DEPTH} levels)" in response.json()["error"]
    assert not Question.objects.exists()


MEMORY_PROBE = textwrap.dedent(
    """
    import io, json, resource, sys
    from audits.questionbank.pipeline import scan_file
    from audits.questionbank.records import ImportFileError
    from edufair_web.json_input import JSONInputError, loads

    content = sys.stdin.buffer.read()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    refused = []
    for source, name in (("jsonl", "nested.json"), ("sciq", "nested.json"), ("jsonl", "nested.jsonl")):
        body = content if name.endswith(".json") else content[1:-1]  # one JSON line of nested objects
        try:
            scan_file(source, lambda: io.BytesIO(body), filename=name, parameters={}, record_limit=1 << 20)
        except ImportFileError as error:
            refused.append("nested too deeply" in str(error))
    try:
        loads(content)
    except JSONInputError as error:
        refused.append("nested too deeply" in str(error))
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    print(json.dumps({"refused": refused, "grown_mb": (after - before) / 1024}))
    """
)


def test_refusing_the_nested_file_keeps_the_process_memory_small():
    # A fresh interpreter, so that the peak RSS (ru_maxrss) belongs to this import alone.
    probe = subprocess.run(
        [sys.executable, "-c", MEMORY_PROBE],
        input=NESTED_QUESTION_FILE.encode(),
        capture_output=True,
        cwd=ROOT,
        timeout=60,
        check=True,
    )
    result = json.loads(probe.stdout)
    assert result["refused"] == [True, True, True, True], probe.stderr.decode()[-2000:]
    assert result["grown_mb"] < 200, result


REQUEST_MEMORY_PROBE = textwrap.dedent(
    """
    import io, json, os, resource, sys
    import django
    from django.conf import settings

    django.setup()
    settings.DATABASES["default"]["NAME"] = os.environ["PROBE_TEST_DATABASE"]  # the test run's database
    settings.ALLOWED_HOSTS = ["testserver"]
    from django.contrib.auth.models import User
    from django.db import transaction
    from rest_framework.test import APIClient
    from audits.models import Question

    content = sys.stdin.buffer.read()
    with transaction.atomic():  # everything this process writes is rolled back
        client = APIClient()
        client.force_authenticate(User.objects.create(username="memory-probe", is_superuser=True))
        upload = io.BytesIO(content)
        upload.name = "nested.json"
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        response = client.post(
            "/api/question-imports/", {"source": "jsonl", "file": upload, "parameters": "{}"}, format="multipart"
        )
        after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
        print(json.dumps({"status": response.status_code, "error": response.json().get("error", ""),
                          "questions": Question.objects.count(), "grown_mb": (after - before) / 1024}))
        transaction.set_rollback(True)
    """
)


def test_the_600_kb_upload_through_the_api_keeps_the_web_process_small(transactional_db, settings):
    """The hostile client's request, whole (upload handler, serializer, view, import): a fresh process answers
    it with a 400 while its peak memory grows less than 200 MB. The process uses this run's test database."""
    env = {**os.environ, "PROBE_TEST_DATABASE": str(settings.DATABASES["default"]["NAME"])}
    probe = subprocess.run(
        [sys.executable, "-c", REQUEST_MEMORY_PROBE],
        input=NESTED_QUESTION_FILE.encode(),
        capture_output=True,
        cwd=ROOT,
        env=env,
        timeout=120,
    )
    assert probe.returncode == 0, probe.stderr.decode()[-3000:]
    result = json.loads(probe.stdout.decode().strip().splitlines()[-1])
    assert result["status"] == 400 and "nested too deeply" in result["error"], result
    assert result["questions"] == 0
    assert result["grown_mb"] < 200, result


def test_nesting_at_the_limit_is_accepted_and_one_more_level_refused(researcher_api):
    def record(depth):
        nested = "[" * (depth - 2) + "]" * (depth - 2)  # the record and its metadata object are two levels
        return f'{{"domain": "physics", "text": "t{depth}", "answer": "1", "metadata": {{"x": {nested}}}}}\n'

    assert post_questions(researcher_api, record(MAX_DEPTH), "ok.jsonl").status_code == 201
    refused = post_questions(researcher_api, record(MAX_DEPTH + 1), "deep.jsonl")
    assert refused.status_code == 400 and "nested too deeply" in refused.json()["error"]


@pytest.mark.parametrize(
    ("fmt", "content"),
    [
        ("jsonl", '{"id": "a", "text": "x", "metadata": ' + "[" * 50_000 + "]" * 50_000 + "}\n"),
        ("csv", 'id,text,turns\na,b,"' + "[" * 50_000 + "]" * 50_000 + '"\n'),
    ],
)
def test_deep_item_lines_and_csv_turns_are_a_line_error(researcher_api, project, fmt, content):
    response = post_items(researcher_api, project, content, fmt)
    assert response.status_code == 400
    (error,) = response.json()["errors"]
    assert f"nested too deeply (more than {MAX_DEPTH} levels)" in error["message"]


def test_a_deep_csv_cell_of_a_question_file_is_refused(researcher_api):
    content = 'domain,text,answer,metadata\nphysics,t,1,"' + "[" * 10_000 + '"\n'
    response = post_questions(researcher_api, content, "deep.csv", source="csv")
    assert response.status_code == 400
    assert "nested too deeply" in response.json()["error"]


@pytest.mark.parametrize(
    ("url", "body"),
    [
        ("/api/annotation/projects/", "[" * 100_000),
        ("/api/annotation/projects/", '{"name": ' + "[" * 100_000 + "]" * 100_000 + "}"),
        ("/api/model-endpoints/", '{"name": "x", "extra": ' + "{" * 1_000 + "}"),
    ],
)
def test_a_deep_json_body_is_a_400(researcher_api, url, body):
    response = researcher_api.post(url, data=body, content_type="application/json")
    assert response.status_code == 400
    assert "nested too deeply" in response.json()["detail"]


def test_a_json_body_over_the_request_limit_is_a_400(researcher_api, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    body = json.dumps({"name": "x" * 2000})
    response = researcher_api.post("/api/annotation/projects/", data=body, content_type="application/json")
    assert response.status_code == 400  # Django's RequestDataTooBig, before the parser reads it


def test_deep_json_text_in_a_model_serializer_json_field_is_a_400(researcher_api):
    # A form value of a model's JSONField is parsed as JSON text by DRF (it was a RecursionError, a 500).
    data = {"name": "x", "categories": "[" * 100_000}
    response = researcher_api.post("/api/annotation/projects/", data, format="multipart")
    assert response.status_code == 400
    assert "categories" in response.json()
    assert not AnnotationProject.objects.filter(name="x").exists()


def test_deep_json_text_in_a_multipart_json_field_is_a_400(researcher_api):
    response = post_questions(researcher_api, '{"domain": "physics", "text": "t", "answer": 1}\n', "q.jsonl",
                              parameters="[" * 100_000)  # fmt: skip
    assert response.status_code == 400
    assert "parameters" in response.json()


# -- capped error lists -----------------------------------------------------------------------------------------


def test_a_megabyte_of_bad_jsonl_lines_gets_a_bounded_answer(researcher_api, project):
    line = "this is not JSON, and neither is the next line ......\n"
    content = line * (1_000_000 // len(line))
    response = post_items(researcher_api, project, content)
    assert response.status_code == 400
    body = response.json()
    assert len(body["errors"]) == MAX_ERRORS
    assert body["more"] == content.count("\n") - MAX_ERRORS
    assert f"and {body['more']} more" in body["detail"]
    assert len(response.content) < 20_000
    assert not Item.objects.exists()


# Sixty times the error cap: enough to show the cap. The import's memory has its own bound
# (annotation/tests/test_label_studio_import_memory.py).
BAD_TASKS = 3_000


def test_three_thousand_bad_label_studio_tasks_get_a_bounded_answer(researcher_api, researcher_client):
    from annotation.label_studio.reading import MAX_ERRORS as LABEL_STUDIO_MAX_ERRORS
    from annotation.tests.main_setup import build_main_stage

    target = build_main_stage(items=1, overlap=1, name="label studio target").project  # categories A and B
    region = {"from_name": "q1", "type": "choices", "value": {"choices": ["yes"]}}
    tasks = [
        {"id": n, "data": {"text": "t", "category": "Z"}, "annotations": [{"completed_by": 1, "result": [region]}]}
        for n in range(BAD_TASKS)
    ]
    content = json.dumps(tasks)
    response = researcher_api.post(
        f"/api/annotation/projects/{target.pk}/label-studio-import/", {"content": content}, format="json"
    )
    assert response.status_code == 400
    body = response.json()
    assert len(body["errors"]) == LABEL_STUDIO_MAX_ERRORS and body["more"] == BAD_TASKS - LABEL_STUDIO_MAX_ERRORS
    assert f"{BAD_TASKS} error(s)" in body["detail"] and f"and {body['more']} more" in body["detail"]
    assert len(response.content) < 20_000  # 30,000 such tasks answered 2.1 MB
    page = researcher_client.post(
        f"/annotation/projects/{target.pk}/label-studio-import/", {"file": upload("ls.json", content)}
    )
    assert page.status_code == 400 and f"There are {body['more']} more errors." in page.content.decode()
    assert len(page.content) < 100_000
    assert not Item.objects.filter(project=target, external_id__startswith="label-studio-").exists()


def test_quoted_values_in_errors_are_cut(researcher_api, project):
    lines = [json.dumps({"id": f"i{n}", "text": "t", "modality": "m" * 20_000}) for n in range(60)]
    response = post_items(researcher_api, project, "\n".join(lines))
    assert response.status_code == 400
    assert response.json()["more"] == 10
    assert len(response.content) < 20_000


def test_the_page_lists_twenty_errors_and_counts_the_rest(researcher_client, project):
    content = "not json\n" * 500
    response = researcher_client.post(
        f"/annotation/projects/{project.pk}/import/", {"format": "jsonl", "file": upload("items.jsonl", content)}
    )
    assert response.status_code == 400
    assert "There are 480 more errors." in response.content.decode()


def test_items_the_database_cannot_store_are_line_errors(researcher_api, project):
    # Each was a database error (a 500) on PostgreSQL, or an uncaught one on both.
    content = "\n".join(
        [
            json.dumps({"id": "a", "text": "nul \u0000 here"}),
            json.dumps({"id": "b" * 201, "text": "t"}),
            json.dumps({"id": "c", "text": "t", "category": "c" * 201}),
            '{"id": "d", "text": "a lone \\ud800 surrogate"}',
            '{"id": "e", "turns": [{"role": "student", "text": "t"}], "highlight": Infinity}',
        ]
    )
    response = post_items(researcher_api, project, content)
    assert response.status_code == 400
    messages = [(e["line"], e["field"], e["message"]) for e in response.json()["errors"]]
    assert messages == [
        (1, "line", "contains a NUL character (\\x00), which cannot be stored"),
        (2, "id", "longer than 200 characters"),
        (3, "category", "longer than 200 characters"),
        (4, "line", "contains a lone surrogate (\\ud800), which cannot be stored"),
        (5, "highlight", "must be a turn index"),
    ]


def test_a_csv_cell_over_the_csv_modules_limit_is_a_line_error(researcher_api, project):
    response = post_items(researcher_api, project, "id,text\na," + "x" * 200_000 + "\n", "csv")
    assert response.status_code == 400
    (error,) = response.json()["errors"]
    assert "unreadable CSV (field larger than field limit" in error["message"]


def test_a_lone_surrogate_in_a_question_is_refused_with_its_field(researcher_api):
    content = '{"domain": "physics", "text": "a lone \\udfff here", "answer": 1}\n'
    response = post_questions(researcher_api, content, "q.jsonl")
    assert response.status_code == 400
    assert "'text'" in response.json()["error"] and "lone surrogate (\\udfff)" in response.json()["error"]


# -- upload size per kind ---------------------------------------------------------------------------------------


@pytest.fixture
def small_limits(settings):
    settings.UPLOAD_MAX_BYTES = {"items": 1000, "questions": 2000}


def test_an_item_file_over_the_limit_is_refused_naming_it(researcher_api, project, small_limits):
    response = post_items(researcher_api, project, json.dumps({"id": "a", "text": "x" * 1000}))
    assert response.status_code == 400
    assert "the largest item file accepted is 1000\xa0bytes (1000 bytes)" in response.json()["file"][0]
    content = researcher_api.post(
        f"/api/annotation/projects/{project.pk}/import-items/",
        {"format": "jsonl", "content": json.dumps({"id": "a", "text": "x" * 1000})},
        format="json",
    )
    assert content.status_code == 400 and "(1000 bytes)" in content.json()["content"][0]
    assert not Item.objects.exists()


def test_an_item_file_at_the_limit_is_imported(researcher_api, project, small_limits):
    line = json.dumps({"id": "a", "text": "x"})
    response = post_items(researcher_api, project, line + " " * (1000 - len(line)))
    assert response.status_code == 201, response.content


def test_a_question_file_over_the_limit_is_refused_naming_it(researcher_api, researcher_client, small_limits):
    content = '{"domain": "physics", "text": "' + "t" * 2000 + '", "answer": 1}\n'
    response = post_questions(researcher_api, content, "big.jsonl")
    assert response.status_code == 400
    assert "the largest question file accepted is 2.0\xa0KB (2000 bytes)" in response.json()["file"][0]
    page = researcher_client.post(
        "/audits/questionbank/imports/new/", {"source": "jsonl", "file": upload("big.jsonl", content)}
    )
    assert page.status_code == 400  # the form again, with the error
    assert "(2000 bytes)" in page.content.decode()
    assert not Question.objects.exists()


def test_an_item_page_upload_over_the_limit_is_refused_naming_it(researcher_client, project, small_limits):
    response = researcher_client.post(
        f"/annotation/projects/{project.pk}/import/", {"format": "jsonl", "file": upload("i.jsonl", "x" * 1001)}
    )
    assert response.status_code == 400
    assert "(1000 bytes)" in response.content.decode()


# -- run_audit --config -----------------------------------------------------------------------------------------


def _block_yaml(depth: int) -> str:
    return "".join(f"{'  ' * level}k{level}:\n" for level in range(depth)) + f"{'  ' * depth}leaf: 1\n"


@pytest.mark.parametrize(
    ("suffix", "text"),
    [
        (".json", '{"name": ' + "[" * 100_000 + "]" * 100_000 + "}"),
        (".yaml", "name: " + "[" * 100_000 + "]" * 100_000 + "\n"),
        (".yaml", _block_yaml(MAX_DEPTH + 1)),
    ],
)
def test_a_run_audit_config_nested_too_deeply_is_a_command_error(tmp_path, suffix, text):
    from django.core.management.base import CommandError

    from audits.management.commands.run_audit import config_load

    path = tmp_path / f"config{suffix}"
    path.write_text(text)
    with pytest.raises(CommandError, match=f"nested too deeply \\(more than {MAX_DEPTH} levels\\)"):
        config_load(path)


def test_a_run_audit_config_at_the_limit_loads(tmp_path):
    from audits.management.commands.run_audit import config_load

    path = tmp_path / "config.yaml"
    path.write_text(_block_yaml(MAX_DEPTH - 1))  # the top mapping is the first level
    assert "k0" in config_load(path)


ENDPOINT_FORM = {"name": "e", "provider": "simulation", "model": "m", "simulation_config": "{}", "temperature": 0,
                 "timeout": 60, "max_concurrency": 8, "revision": 1, "price_input_per_million": 0,
                 "price_output_per_million": 0, "batch_price_factor": 0.5}  # fmt: skip


@pytest.mark.parametrize("extra", ["[" * 100_000 + "]" * 100_000, "[" + "9" * 5000 + "]"])
def test_json_in_a_page_or_admin_form_field_is_bounded_too(researcher_client, admin_client, extra):
    """Django's form JSONField catches only JSONDecodeError: deep text was a RecursionError and a number of
    5,000 digits a ValueError (both 500s) on the endpoint page and in the admin."""
    from django.urls import reverse

    from audits.models import ModelEndpoint

    for client, url in ((researcher_client, reverse("audits:endpoint-new")),
                        (admin_client, reverse("admin:audits_modelendpoint_add"))):  # fmt: skip
        response = client.post(url, {**ENDPOINT_FORM, "extra_params": extra})
        assert response.status_code == 200, url  # the form again, with the error
        assert "Enter a valid JSON." in response.content.decode(), url
    assert not ModelEndpoint.objects.exists()
