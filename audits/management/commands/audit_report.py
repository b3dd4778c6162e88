"""Management command that writes an audit's fairness results (HTML, JSON and CSV) to a folder.

Usage: `manage.py audit_report AUDIT_ID --out DIR`. The folder gets the self-contained HTML report, the JSON of every
table and the raw scores, and one CSV per table, with the same numbers as the results page and the API (and the same
parameters, given as options)."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from audits.exports import write_report
from audits.models import Audit
from audits.services.analysis import analysis_parameters_from, audit_analysis
from audits.violation_rules import DEFAULT_THRESHOLD


class Command(BaseCommand):
    help = "Write an audit's fairness report (HTML), results (JSON) and every table (CSV) to a folder."

    def add_arguments(self, parser):
        parser.add_argument("audit_id", type=int)
        parser.add_argument("--out", required=True, help="Folder to write into (created if missing).")
        parser.add_argument("--effect", choices=["r", "rank_biserial"], default="r")
        parser.add_argument("--zero-method", choices=["pratt", "wilcox", "zsplit"], default="pratt")
        parser.add_argument("--n-boot", type=int, default=2000)
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--threshold", type=float, default=DEFAULT_THRESHOLD)
        parser.add_argument("--min-pairs", type=int, default=15)

    def handle(self, *args, **options):
        audit = Audit.objects.filter(pk=options["audit_id"]).first()
        if audit is None:
            raise CommandError(f"no audit with id {options['audit_id']}")
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
