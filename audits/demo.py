"""Demo content of audits for `manage.py seed_demo`: the default design and the sample question files.

Idempotent: defaults are created only when missing, and a sample file is imported only when no finished
import of the same file (by SHA-256) exists — so running the demo twice leaves one import per sample.
"""

import hashlib
from pathlib import Path

from django.conf import settings

from audits.models import QuestionImport
from audits.services.design import design_defaults_seed
from audits.services.questionbank import question_import_from_path

SAMPLES_DIR = Path(settings.BASE_DIR) / "samples"
SAMPLE_IMPORTS = (
    ("socrateach", "socrateach_multi_sample.json", {}),
    ("sciq", "sciq_sample.json", {"seed": 0}),
    ("jsonl", "generic_sample.jsonl", {}),
    ("csv", "generic_sample.csv", {}),
)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def sample_imports_seed(stdout=None) -> list[QuestionImport]:
    imports = []
    for source, filename, parameters in SAMPLE_IMPORTS:
        path = SAMPLES_DIR / filename
        done = QuestionImport.objects.filter(file_sha256=_sha256(path), status=QuestionImport.Status.DONE).first()
        if done is not None:
            imports.append(done)
            continue
        question_import = question_import_from_path(source=source, path=path, parameters=parameters)
        imports.append(question_import)
        if stdout is not None:
            stdout.write(
                f"  imported {filename}: {question_import.status}, {question_import.questions_created} new question(s)"
            )
    return imports


def demo_seed(stdout) -> None:
    created = design_defaults_seed()
    stdout.write(
        "Audits design defaults: "
        + ", ".join(f"{count} {what}" for what, count in created.items())
        + " created (existing rows left as they were)."
    )
    sample_imports_seed(stdout)
