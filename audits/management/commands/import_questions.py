"""`manage.py import_questions --source {socrateach,sciq,jsonl,csv} FILE [--seed N] [--param NAME=VALUE ...]`.

Imports a local file in place with a progress bar, prints the funnel, and exits non-zero when the file is
rejected (nothing is imported then).
"""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from audits.models import QuestionImport
from audits.questionbank.pipeline import SOURCE_ALIASES
from audits.selectors.questionbank import funnel_rows
from audits.services.questionbank import question_import_from_path


class Command(BaseCommand):
    help = "Import questions from a SocraTeach, SciQ or generic JSONL/CSV file (all or nothing, idempotent)."

    def add_arguments(self, parser):
        parser.add_argument("file")
        parser.add_argument("--source", required=True, choices=sorted(SOURCE_ALIASES))
        parser.add_argument("--seed", type=int, help="Sampling seed (SciQ).")
        parser.add_argument(
            "--param",
            action="append",
            default=[],
            metavar="NAME=VALUE",
            help="Importer parameter, e.g. min_exchanges=4, threshold=0.65, per_domain_max=500, format=csv.",
        )
        parser.add_argument("--no-progress", action="store_true", help="No progress bar (for logs).")

    def handle(self, *args, file, source, seed, param, no_progress, **options):
        path = Path(file)
        if not path.is_file():
            raise CommandError(f"no such file: {path}")
        parameters = {}
        for item in param:
            name, sep, value = item.partition("=")
            if not sep or not name.strip():
                raise CommandError(f"--param expects NAME=VALUE, got {item!r}")
            parameters[name.strip()] = value.strip()
        if seed is not None:
            parameters["seed"] = seed

        bars: dict[str, tqdm] = {}

        def progress(phase: str, done: int, total: int) -> None:
            if no_progress:
                return
            bar = bars.get(phase)
            if bar is None:
                for other in bars.values():
                    other.close()
                unit = "B" if phase in ("checking", "reading", "validating") else "it"
                bar = bars[phase] = tqdm(total=total or None, desc=phase, unit=unit, unit_scale=unit == "B",
                                         file=self.stderr._out, leave=False)  # fmt: skip
            bar.total = total or bar.total
            bar.n = done
            bar.refresh()

        question_import = question_import_from_path(source=source, path=path, parameters=parameters, progress=progress)
        for bar in bars.values():
            bar.close()
        if question_import.status == QuestionImport.Status.FAILED:
            raise CommandError(f"rejected, nothing imported: {question_import.error}")
        self.stdout.write(f"Import #{question_import.pk} of {path.name} ({question_import.source}):")
        for row in funnel_rows(question_import):
            dropped = f"  (−{row['dropped']})" if row["dropped"] else ""
            self.stdout.write(f"  {row['step']:<58} {row['count']:>8}{dropped}")
