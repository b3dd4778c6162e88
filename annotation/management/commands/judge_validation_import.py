"""`manage.py judge_validation_import FILE [--name NAME]`: import a human-labelled file as a judge-validation project.

The file is a published one (MRBench V1/V2 or the BEA 2025 shared-task files); the import is the same as the page's and
the API's. The command prints what was imported, what the file lacks and every warning."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.judge_validation.importing import MRBenchError, labelled_file_import


class Command(BaseCommand):
    help = "Import an MRBench or BEA 2025 labelled file as a judge-validation project."

    def add_arguments(self, parser):
        parser.add_argument("file", help="The JSON file as published.")
        parser.add_argument("--name", default="", help="The project's name (default: from the file name).")

    def handle(self, *args, **options):
        path = Path(options["file"])
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise CommandError(f"Cannot read {path}: {exc.strerror or exc}.") from None
        try:
            project = labelled_file_import(data=data, filename=path.name, name=options["name"])
        except MRBenchError as exc:
            raise CommandError(f"Not imported: {exc}.") from None
        summary = project.options["import"]
        self.stdout.write(
            f"Project #{project.pk} “{project.name}”: {summary['n_responses']} tutor responses from "
            f"{summary['n_records']} dialogues ({summary['schema_name']})."
        )
        self.stdout.write(f"Dimensions in the file: {', '.join(summary['dimensions']) or 'none'}.")
        if summary["missing_dimensions"]:
            self.stdout.write(f"Not in the file: {', '.join(summary['missing_dimensions'])}.")
        for warning in summary["warnings"]:
            self.stdout.write(self.style.WARNING(f"Warning: {warning}."))
        self.stdout.write(
            f"Next: add a judge and read the report at /annotation/judge-validation/{project.pk}/ "
            "(imported labels give no pass: the human reliability is unknown)."
        )
