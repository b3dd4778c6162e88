"""`manage.py label_studio_import PROJECT FILE [--stage N] [--accept-revisions] [--instance NAME]`: import.

A Label Studio JSON export, imported as the page and the API import it (`annotation.label_studio.importing`): the
command prints what was imported, every warning and every task refused on its own, and fails with the errors when
nothing was imported."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.label_studio.importing import LabelStudioImportFailed, label_studio_import
from annotation.selectors.projects import project_by_id


class Command(BaseCommand):
    help = "Import a Label Studio JSON export (tasks with annotations) into an annotation project."

    def add_arguments(self, parser):
        parser.add_argument("project", type=int, help="The annotation project's id.")
        parser.add_argument("file", help="Label Studio's JSON export of a project (Export → JSON).")
        parser.add_argument("--stage", type=int, default=None, help="Stage for annotations naming none.")
        parser.add_argument(
            "--accept-revisions",
            action="store_true",
            help="Keep a label changed in Label Studio as a revision beside the original (otherwise its task is "
            "refused and the rest imported).",
        )
        parser.add_argument(
            "--instance",
            default="",
            help="A name for the Label Studio the file comes from: annotators named by user number only are told "
            "apart by (instance, number).",
        )

    def handle(self, *args, **options):
        project = project_by_id(options["project"])
        if project is None:
            raise CommandError(f"There is no annotation project {options['project']}.")
        path = Path(options["file"])
        try:
            content = path.read_bytes()
        except OSError as exc:
            raise CommandError(f"Cannot read {path}: {exc.strerror or exc}.") from None
        try:
            report = label_studio_import(
                project=project,
                content=content,
                stage_order=options["stage"],
                accept_revisions=options["accept_revisions"],
                instance=options["instance"],
            )
        except LabelStudioImportFailed as exc:
            raise CommandError("\n".join([f"Nothing was imported from {path}:", *exc.sentences()])) from None
        self.stdout.write(report.describe())
        for warning in report.warnings:
            self.stdout.write(self.style.WARNING(f"Warning: {warning}"))
        for refusal in report.refused:
            self.stdout.write(self.style.WARNING(f"Refused: {refusal}"))
