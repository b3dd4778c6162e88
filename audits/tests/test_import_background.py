"""A large upload is imported by a real Celery worker (its own process), with progress kept in the database."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import transaction

from audits.models import Question, QuestionImport
from audits.services.questionbank import question_import_submit
from audits.tests.questionbank_files import write_generic_jsonl
from conftest import wait_for


@pytest.mark.services
def test_large_upload_runs_in_a_worker(celery_worker_process, settings, monkeypatch, tmp_path):
    queue = celery_worker_process.queue
    settings.AUDITS_TASK_QUEUE = queue
    media = tmp_path / "media"
    settings.MEDIA_ROOT = media
    monkeypatch.setenv("MEDIA_ROOT", str(media))  # the worker process reads it from its environment
    _, process = celery_worker_process(concurrency=1)

    path = tmp_path / "upload.jsonl"
    write_generic_jsonl(path, 3_000)
    with transaction.atomic():
        question_import = question_import_submit(
            source="jsonl",
            uploaded_file=SimpleUploadedFile("upload.jsonl", path.read_bytes()),
            inline_max_bytes=1024,
        )
        assert question_import.status == QuestionImport.Status.QUEUED

    finished = wait_for(
        lambda: QuestionImport.objects.filter(pk=question_import.pk, status__in=["done", "failed"]).first(),
        timeout=90,
        message="the worker to finish the import",
        processes=[process],
    )
    assert process.poll() is None, "the worker exited"
    assert finished.status == QuestionImport.Status.DONE, finished.error
    assert finished.questions_created == 3_000
    assert finished.progress_done == finished.progress_total == 3_000
    assert finished.progress_percent == 100
    assert Question.objects.filter(imports=finished).count() == 3_000
    assert not finished.file and [path for path in media.rglob("*") if path.is_file()] == []  # the upload deleted
