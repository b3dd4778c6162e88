"""Demo content of audits for `manage.py seed_demo`: design defaults, sample questions, two simulation audits.

The default design and the sample question files, then two simulation audits run to the end. Idempotent:
defaults are created only when missing, and a sample file is imported only when no finished import of the same
file (by SHA-256) exists — so running the demo twice leaves one import per sample.

The two audits: a fair and a planted-bias simulated tutor (`demo_audit_seed`), and a fair tutor scored by a
cue-sensitive simulated judge (`cue_demo_audit_seed`: the judge, not the tutor, is harsher on one level's tone),
whose judge-validation project (annotation's demo) shows on the judge-corrected page that the humans do not
support the judge's flag.
"""

import hashlib
from pathlib import Path

from django.conf import settings

from audits.endpoint_roles import JUDGE, STUDENT, TUTOR
from audits.fairness import AnalysisParameters
from audits.models import Audit, ModelEndpoint, QuestionImport
from audits.selectors.design import question_ids_by_domain
from audits.selectors.runs import audit_progress
from audits.services.audit_lifecycle import audit_create_from_design
from audits.services.design import design_defaults_seed
from audits.services.dialogue_batches import audit_run_inline
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
    if not small:
        # Left out of the small demo: at 2 questions per domain no cell could be flagged, so it would show nothing.
        cue_demo_audit_seed(stdout)


# --- audit engine: a small simulation audit, run to the end during the seed ----------------------------

DEMO_AUDIT_NAME = "Demo audit (simulation): fair vs planted-bias tutor"
DEMO_BIAS = [
    # The biased simulated tutor is harsher and scaffolds less for students who say English is not their
    # first language — the kind of gap EduFair-Bench reports for language cues.
    {"level": "first_language=non_english_l1", "metric": "corrective_tone", "shift": -0.45},
    {"level": "first_language=non_english_l1", "metric": "step_scaffolded", "shift": -0.3},
]


SMALL_DEMO_QUESTIONS_PER_DOMAIN = 2  # `seed_demo --small`


def _simulated_endpoint(name: str, role: str, description: str = "", **config) -> ModelEndpoint:
    """The demo's simulation endpoint of this name, offered in its one role's list (made once: seed 0, no planted
    tutor bias unless given)."""
    found, _ = ModelEndpoint.objects.get_or_create(
        name=name,
        defaults={
            "provider": ModelEndpoint.Provider.SIMULATION,
            "model": name.lower().replace(" ", "-"),
            "simulation_config": {"seed": 0, "bias": [], **config},
            "description": description,
            "roles": [role],
        },
    )
    return found


def _fair_tutor() -> ModelEndpoint:
    return _simulated_endpoint("Simulated tutor A (fair)", TUTOR, "Seeded simulated tutor with no planted bias.")


def _student() -> ModelEndpoint:
    return _simulated_endpoint("Simulated student", STUDENT, "The fixed simulated student (temperature 0).")


def _rule_judge() -> ModelEndpoint:
    return _simulated_endpoint("Simulated judge (rule-based)", JUDGE, "Scores turns by transparent phrase rules.")


def _run_to_the_end(audit: Audit, stdout, label: str) -> Audit:
    if audit.status != Audit.Status.FINISHED:
        audit_run_inline(audit=audit)
        audit.refresh_from_db()
    progress = audit_progress(audit=audit)
    stdout.write(
        f"{label} #{audit.pk}: {audit.status}, {progress['done']} dialogues done, "
        f"{progress['failed']} failed, {progress['turns_scored']} tutor turns scored."
    )
    return audit


def demo_audit_seed(stdout, questions_per_domain: int | None = None) -> None:
    """Seed the simulated endpoints and RUN the demo audit in this process (synchronously, through the
    same batch runner and ledger the workers use), so the dashboard shows a finished audit as soon as the
    server starts. Idempotent: an existing finished demo audit is left alone; an unfinished one resumes.
    ``questions_per_domain``: at most that many questions per domain (default: every imported question)."""
    fair = _fair_tutor()
    biased = _simulated_endpoint(
        "Simulated tutor B (planted bias)",
        TUTOR,
        "Seeded simulated tutor with a planted bias against non-English-L1 students (tone, scaffolding).",
        bias=DEMO_BIAS,
    )
    student = _student()
    judge = _rule_judge()

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
    _run_to_the_end(audit, stdout, "Demo audit (simulation)")


# --- a fair tutor under a cue-sensitive judge -----------------------------------------------------------

CUE_DEMO_AUDIT_NAME = "Demo audit (simulation): fair tutor, cue-sensitive judge"
CUE_DEMO_DIMENSION = "first_language"
# The simulated judge, not the tutor, is harsher on the tone of turns to students who say English is not their
# first language: one point lower, clamped at 0 (`audits.llm.simulation`, judge_bias).
CUE_DEMO_JUDGE_BIAS = [{"level": "first_language=non_english_l1", "metric": "corrective_tone", "shift": -1}]


def cue_demo_domains() -> list[str]:
    """The domains with at least as many questions as a cell needs to be flagged (the analysis' min_pairs), so
    every cell of the audit can show the judge's flag; every domain when none has that many."""
    needed = AnalysisParameters().min_pairs
    by_domain = question_ids_by_domain()
    return sorted(domain for domain, ids in by_domain.items() if len(ids) >= needed)


def cue_demo_audit_seed(stdout, questions_per_domain: int | None = None) -> Audit:
    """Seed and RUN (in this process) the second demo audit: the fair simulated tutor on control and the
    first-language levels of the questions of `cue_demo_domains`, scored by a cue-sensitive simulated judge.
    The reveal check is the rule-based judge's, and tutor, student and check are the first demo audit's
    endpoints with its seed, so the ledger serves their replies again when that audit ran first: the dialogues
    are the fair tutor's there, and only the judge's scores differ. Idempotent like `demo_audit_seed`."""
    fair = _fair_tutor()
    student = _student()
    rule_judge = _rule_judge()
    judge = _simulated_endpoint(
        "Simulated judge (cue-sensitive)",
        JUDGE,
        "The rule-based simulated judge, one point harsher on the tone of turns to non-English-L1 students.",
        judge_bias=CUE_DEMO_JUDGE_BIAS,
    )
    audit = Audit.objects.filter(name=CUE_DEMO_AUDIT_NAME).order_by("pk").first()
    if audit is None:
        audit = audit_create_from_design(
            name=CUE_DEMO_AUDIT_NAME,
            description="A simulation, not a real model: a fair seeded tutor whose judge is harsher on the tone of "
            "turns to non-English-L1 students, so the judge alone flags a gap the tutor does not have; the humans "
            "of its judge-validation project, who rate by the rules, do not support it (judge-corrected results).",
            tutors=[fair],
            student_endpoint=student,
            judge_endpoint=judge,
            check_endpoint=rule_judge,
            selection={"domains": cue_demo_domains(), "seed": 0, "count": questions_per_domain},
            choice={"control": True, "explicit_dimensions": [CUE_DEMO_DIMENSION]},
            seed=0,
        )
    return _run_to_the_end(audit, stdout, "Demo audit (simulation), cue-sensitive judge")
