"""Celery tasks of audits: thin — load ids, call a service. The database holds all progress."""

from celery import shared_task

from audits.models import QuestionImport


@shared_task(name="audits.question_import_run", acks_late=True)
def question_import_run_task(question_import_id: int) -> str:
    """Run a queued import. Safe to deliver twice: a finished import is left alone, and a run that a
    killed worker left `running` starts again from the file (its writes were one transaction)."""
    from audits.services.questionbank import question_import_run

    question_import = QuestionImport.objects.filter(pk=question_import_id).first()
    if question_import is None or question_import.is_finished:
        return "skipped"
    return question_import_run(question_import=question_import).status
