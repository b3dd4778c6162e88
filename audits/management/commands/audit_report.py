"""Management command that writes an audit's fairness results (HTML, JSON and CSV) to a folder.

Usage: `manage.py audit_report AUDIT_ID --out DIR`. The folder gets the self-contained HTML report, the JSON of every
table and the raw scores, and one CSV per table, with the same numbers as the results page and the API (and the same
parameters, given as options built from audits.analysis_parameters). Each file is its download's bytes, written piece
by piece as the download streams (audits.report_files), so the raw scores never sit in memory whole."""

import argparse
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from audits.analysis_parameters import DoorParameter, door_parameters
from audits.models import Audit
from audits.report_files import write_report
from audits.services.analysis import analysis_parameters_from, audit_analysis


def _bounded(parameter: DoorParameter):
    """argparse's type of a numeric parameter: its Python type, refused outside the spec's bounds."""
    low, high = parameter.spec.minimum, parameter.spec.maximum

    def convert(text: str):
        value = parameter.kind(text)
        if (low is not None and value < low) or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"{parameter.name} must be between {low} and {high}, not {value}")
        return value

    convert.__name__ = parameter.kind.__name__  # argparse names the type in "invalid int value"
    return convert


def add_parameter_argument(parser, parameter: DoorParameter) -> None:
    """The command-line option of one analysis parameter (`--zero-method` for zero_method), from its spec."""
    spec = parameter.spec
    option = "--" + parameter.name.replace("_", "-")
    words = " ".join(part for part in (f"{spec.label}.", spec.help) if part).replace("%", "%%")
    help_text = f"{words} Default: %(default)s."
    if spec.choices:
        parser.add_argument(option, choices=parameter.choice_values, default=parameter.default, help=help_text)
    else:
        parser.add_argument(option, type=_bounded(parameter), default=parameter.default, help=help_text)


class Command(BaseCommand):
    help = "Write an audit's fairness report (HTML), results (JSON) and every table (CSV) to a folder."

    def add_arguments(self, parser):
        parser.add_argument("audit_id", type=int)
        parser.add_argument("--out", required=True, help="Folder to write into (created if missing).")
        for parameter in door_parameters():
            add_parameter_argument(parser, parameter)

    def handle(self, *args, **options):
        try:
            audit = Audit.objects.get(pk=options["audit_id"])
        except Audit.DoesNotExist:
            raise CommandError(f"no audit with id {options['audit_id']}") from None
        try:
            parameters = analysis_parameters_from(options)
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        analysis = audit_analysis(audit=audit, parameters=parameters)
        written = write_report(analysis, Path(options["out"]))
        if audit.uses_simulation:
            self.stdout.write(self.style.WARNING("SIMULATION: this audit used simulated models; every file says so."))
        source = "from the cache" if analysis.from_cache else f"computed in {analysis.seconds:.1f} s"
        self.stdout.write(f"Audit {audit.pk} ({audit.name}): analysis {source}; wrote {len(written)} files:")
        for path in written:
            self.stdout.write(f"  {path}")
