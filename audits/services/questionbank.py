"""Writes of the question bank: record an import, run it (validate all, then write atomically), submit it.

An import is all or nothing: `scan_file` reads and validates the whole file before anything is written,
and the write itself runs in one transaction. Questions are unique by (source, source_id), so importing a
file again adds no question; it records a new import whose funnel shows the items as "already in bank".
Small files run inside the request; larger ones go to a Celery task and report progress on their page. The
uploaded file is kept only while its import may still read it (queued, or running and so re-run by a worker that
takes up a dead one's work), and deleted when the import ends, done or failed.
"""

import time
from collections.abc import Callable, Iterable, Iterator
from itertools import islice
from pathlib import Path

from django.conf import settings
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import UploadedFile
from django.db import connection, transaction
from django.utils import timezone

from audits.models import Question, QuestionImport
from audits.questionbank.pipeline import SOURCE_ALIASES, scan_file
from audits.questionbank.records import FunnelStep, ImportFileError, QuestionData
from audits.services.task_queue import QUESTION_IMPORT_RUN, audit_task_queue, task_send_on_commit
from edufair_web.upload_limits import record_limit

WRITE_BATCH = 500
PROGRESS_EVERY_SECONDS = 0.5
# Files up to this size are imported inside the upload request; larger ones by a background task
# (setting QUESTION_IMPORT_INLINE_MAX_BYTES overrides it).

ProgressHook = Callable[[str, int, int], None]


def question_import_create(
    *,
    source: str,
    filename: str,
    uploaded_file: UploadedFile | None = None,
    parameters: dict | None = None,
    user=None,
) -> QuestionImport:
    """Store the upload (if any) and a queued import record. The source is checked here, not later."""
    importer = SOURCE_ALIASES.get(source)
    if importer is None:
        raise ImportFileError(f"unknown source {source!r}; choose one of {', '.join(SOURCE_ALIASES)}")
    parameters = dict(parameters or {})
    if source == "csv":
        parameters.setdefault("format", "csv")
    question_import = QuestionImport(
        source=importer,
        original_filename=Path(filename).name[:255],
        parameters=parameters,
        created_by=user if user is not None and user.is_authenticated else None,
        file_size=uploaded_file.size if uploaded_file is not None else 0,
    )
    if uploaded_file is not None:
        question_import.file.save(Path(filename).name, uploaded_file, save=False)
    question_import.save()
    return question_import


def _opener_for(question_import: QuestionImport, path: str | Path | None):
    if path is not None:
        return lambda: open(path, "rb")  # noqa: SIM115 (the reader closes it)
    if not question_import.file:
        raise ImportFileError("the import has no file")
    name = question_import.file.name
    try:
        local = default_storage.path(name)
    except NotImplementedError:
        return lambda: default_storage.open(name, "rb")
    return lambda: open(local, "rb")  # noqa: SIM115


def _database_progress(question_import_id: int) -> ProgressHook:
    """Write progress to the import row at most twice a second, and never from inside the write transaction."""
    last = 0.0

    def report(phase: str, done: int, total: int) -> None:
        nonlocal last
        now = time.monotonic()
        if now - last < PROGRESS_EVERY_SECONDS or connection.in_atomic_block:
            return
        last = now
        QuestionImport.objects.filter(pk=question_import_id).update(
            phase=phase, progress_done=done, progress_total=total
        )

    return report


def question_import_run(
    *, question_import: QuestionImport, path: str | Path | None = None, progress: ProgressHook | None = None
) -> QuestionImport:
    """Validate the whole file, then write its kept questions in one transaction. Never half-imports.

    A rejected file leaves the import `failed` with the error (naming record/line and field) and the bank
    as it was. Unexpected errors are recorded too, and re-raised so a worker logs them.
    """
    database_progress = _database_progress(question_import.pk)

    def report(phase: str, done: int, total: int) -> None:
        database_progress(phase, done, total)
        if progress is not None:
            progress(phase, done, total)

    QuestionImport.objects.filter(pk=question_import.pk).update(
        status=QuestionImport.Status.RUNNING, phase="checking", started_at=timezone.now(), error=""
    )
    try:
        facts, scan = scan_file(
            question_import.source,
            _opener_for(question_import, path),
            filename=question_import.original_filename,
            parameters=question_import.parameters,
            progress=report,
            record_limit=record_limit(),
        )
        QuestionImport.objects.filter(pk=question_import.pk).update(
            phase="writing", progress_done=0, progress_total=scan.kept_count
        )
        with transaction.atomic():
            created, existing = _write_questions(question_import, scan.questions(), report, scan.kept_count)
            funnel = [step.as_dict() for step in scan.funnel]
            funnel += [FunnelStep("new in bank", created).as_dict(), FunnelStep("already in bank", existing).as_dict()]
            QuestionImport.objects.filter(pk=question_import.pk).update(
                status=QuestionImport.Status.DONE,
                phase="",
                funnel=funnel,
                parameters={**question_import.parameters, "applied": scan.parameters},
                file_size=facts.size,
                file_sha256=facts.sha256,
                questions_created=created,
                questions_existing=existing,
                progress_done=scan.kept_count,
                progress_total=scan.kept_count,
                finished_at=timezone.now(),
            )
    except ImportFileError as error:
        _mark_failed(question_import, str(error))
    except Exception as error:
        _mark_failed(question_import, f"internal error while importing: {error.__class__.__name__}: {error}")
        _upload_delete(question_import)
        raise
    # Not on a worker's shutdown (BaseException): the import stays running, and the task delivered again reads it.
    _upload_delete(question_import)
    question_import.refresh_from_db()
    return question_import


def _upload_delete(question_import: QuestionImport) -> None:
    """The stored upload of a finished import, deleted: nothing reads it again (a re-delivered task skips a finished
    import). A local file imported in place (`path`) is the caller's and is never stored, so never deleted."""
    name = question_import.file.name
    if not name:
        return
    default_storage.delete(name)
    QuestionImport.objects.filter(pk=question_import.pk).update(file="")


def _mark_failed(question_import: QuestionImport, message: str) -> None:
    # An error may quote the file, and PostgreSQL text cannot hold NUL: show it the way Python writes it.
    message = message.replace("\x00", "\\x00")
    QuestionImport.objects.filter(pk=question_import.pk).update(
        status=QuestionImport.Status.FAILED, phase="", error=message, finished_at=timezone.now()
    )


def _batches(items: Iterable[QuestionData], size: int) -> Iterator[list[QuestionData]]:
    iterator = iter(items)
    while batch := list(islice(iterator, size)):
        yield batch


def _write_questions(
    question_import: QuestionImport, items: Iterable[QuestionData], report: ProgressHook, total: int
) -> tuple[int, int]:
    created = existing = done = 0
    through = Question.imports.through
    for batch in _batches(items, WRITE_BATCH):
        source = batch[0].source
        ids = [item.source_id for item in batch]
        known = set(Question.objects.filter(source=source, source_id__in=ids).values_list("source_id", flat=True))
        new = [_question_row(item, question_import) for item in batch if item.source_id not in known]
        Question.objects.bulk_create(new, ignore_conflicts=True)
        created += len(new)
        existing += len(batch) - len(new)
        question_ids = Question.objects.filter(source=source, source_id__in=ids).values_list("id", flat=True)
        through.objects.bulk_create(
            [through(question_id=qid, questionimport_id=question_import.pk) for qid in question_ids],
            ignore_conflicts=True,
        )
        done += len(batch)
        report("writing", done, total)
    return created, existing


def _question_row(item: QuestionData, question_import: QuestionImport) -> Question:
    return Question(
        domain=item.domain,
        source=item.source,
        source_id=item.source_id,
        content_hash=item.content_hash,
        text=item.text,
        answer=item.answer,
        solution=item.solution,
        choices=item.choices,
        support=item.support,
        classifier_confidence=item.classifier_confidence,
        reference_dialogue=item.reference_dialogue,
        metadata=item.metadata,
        first_import=question_import,
    )


def question_import_submit(
    *,
    source: str,
    uploaded_file: UploadedFile,
    parameters: dict | None = None,
    user=None,
    inline_max_bytes: int | None = None,
) -> QuestionImport:
    """Record an upload and import it now (small file) or in the background (large file)."""
    question_import = question_import_create(
        source=source, filename=uploaded_file.name, uploaded_file=uploaded_file, parameters=parameters, user=user
    )
    if inline_max_bytes is None:
        inline_max_bytes = settings.QUESTION_IMPORT_INLINE_MAX_BYTES
    limit = inline_max_bytes
    if question_import.file_size <= limit:
        return question_import_run(question_import=question_import)
    task_send_on_commit(QUESTION_IMPORT_RUN, (question_import.pk,), queue=audit_task_queue())
    return question_import


def question_import_from_path(
    *, source: str, path: str | Path, parameters: dict | None = None, user=None, progress: ProgressHook | None = None
) -> QuestionImport:
    """Import a local file (the management command and the demo): the file is read in place, not copied."""
    path = Path(path)
    question_import = question_import_create(source=source, filename=path.name, parameters=parameters, user=user)
    QuestionImport.objects.filter(pk=question_import.pk).update(file_size=path.stat().st_size)
    return question_import_run(question_import=question_import, path=path, progress=progress)
