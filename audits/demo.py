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


def demo_seed(stdout, small: bool = False) -> None:
    created = design_defaults_seed()
    stdout.write(
        "Audits design defaults: "
        + ", ".join(f"{count} {what}" for what, count in created.items())
        + " created (existing rows left as they were)."
    )
    sample_imports_seed(stdout)
    demo_audit_seed(stdout, questions_per_domain=SMALL_DEMO_QUESTIONS_PER_DOMAIN if small else None)


# --- audit engine: a small simulation audit, run to the end during the seed ----------------------------

DEMO_AUDIT_NAME = "Demo audit (simulation): fair vs planted-bias tutor"
DEMO_BIAS = [
    # The biased simulated tutor is harsher and scaffolds less for students who say English is not their
    # first language — the kind of gap EduFair-Bench reports for language cues.
    {"level": "first_language=non_english_l1", "metric": "corrective_tone", "shift": -0.45},
    {"level": "first_language=non_english_l1", "metric": "step_scaffolded", "shift": -0.3},
]


SMALL_DEMO_QUESTIONS_PER_DOMAIN = 2  # `seed_demo --small`


def demo_audit_seed(stdout, questions_per_domain: int | None = None) -> None:
    """Seed the simulated endpoints and RUN the demo audit in this process (synchronously, through the
    same batch runner and ledger the workers use), so the dashboard shows a finished audit as soon as the
    server starts. Idempotent: an existing finished demo audit is left alone; an unfinished one resumes.
    ``questions_per_domain``: at most that many questions per domain (default: every imported question)."""
    from audits.models import Audit, ModelEndpoint
    from audits.selectors.runs import audit_progress
    from audits.services.audit_lifecycle import audit_create_from_design
    from audits.services.dialogue_batches import audit_run_inline

    def endpoint(name: str, bias: list | None = None, description: str = "") -> ModelEndpoint:
        found, _ = ModelEndpoint.objects.get_or_create(
            name=name,
            defaults={
                "provider": ModelEndpoint.Provider.SIMULATION,
                "model": name.lower().replace(" ", "-"),
                "simulation_config": {"seed": 0, "bias": bias or []},
                "description": description,
            },
        )
        return found

    fair = endpoint("Simulated tutor A (fair)", description="Seeded simulated tutor with no planted bias.")
    biased = endpoint(
        "Simulated tutor B (planted bias)",
        DEMO_BIAS,
        "Seeded simulated tutor with a planted bias against non-English-L1 students (tone, scaffolding).",
    )
    student = endpoint("Simulated student", description="The fixed simulated student (temperature 0).")
    judge = endpoint("Simulated judge (rule-based)", description="Scores turns by transparent phrase rules.")

    audit = Audit.objects.filter(name=DEMO_AUDIT_NAME).order_by("pk").first()
    if audit is None:
        audit = audit_create_from_design(
            name=DEMO_AUDIT_NAME,
            description="A simulation, not a real model: two seeded tutors on the sample questions, one with a "
            "planted bias, so the results pages have something true to find.",
            tutors=[fair, biased],
            student_endpoint=student,
            judge_endpoint=judge,
            selection={"domains": [], "seed": 0, "count": questions_per_domain},
            choice={"control": True, "explicit_dimensions": ["gender", "immigration", "first_language", "ses"]},
            seed=0,
        )
    if audit.status != Audit.Status.FINISHED:
        audit_run_inline(audit=audit)
        audit.refresh_from_db()
    progress = audit_progress(audit=audit)
    stdout.write(
        f"Demo audit (simulation) #{audit.pk}: {audit.status}, {progress['done']} dialogues done, "
        f"{progress['failed']} failed, {progress['turns_scored']} tutor turns scored."
    )
