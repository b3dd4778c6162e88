"""Management command that writes a project's annotation report as HTML, Markdown or JSON.

Usage: `manage.py annotation_report PROJECT_ID [--format html|md|json] [--output FILE]`. The report is the project's
Appendix-D paper trail, the same report as the project's report page."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation import reports
from annotation.selectors.projects import project_by_id


class Command(BaseCommand):
    help = "Write an annotation project's Appendix-D report (HTML, Markdown or JSON)."

    def add_arguments(self, parser):
        parser.add_argument("project_id", type=int)
        parser.add_argument("--format", choices=reports.FORMATS, default="md")
        parser.add_argument("--output", help="File to write (default: standard output).")

    def handle(self, *args, project_id, format, output=None, **options):
        project = project_by_id(project_id)
        if project is None:
            raise CommandError(f"No annotation project {project_id}.")
        body, _ = reports.render(reports.project_report(project), format)
        if output:
            Path(output).write_text(body, encoding="utf-8")
            self.stdout.write(f"Wrote {output}")
        else:
            self.stdout.write(body)
