"""What researchers can do next in audits (home page cards) and the audits links in the navigation."""

from django.contrib.auth.models import User
from django.urls import reverse

from audits.models import Audit, Question
from edufair_web.accounts.roles import RESEARCHER, has_role

NAV_LINKS = [
    (RESEARCHER, "Question bank", "audits:questionbank"),
    (RESEARCHER, "Design", "audits:design"),
]


def home_steps(user: User) -> list[dict]:
    if not has_role(user, RESEARCHER):
        return []
    questions = Question.objects.count()
    return [
        {
            "title": "Build the question bank" if not questions else f"Question bank ({questions} questions)",
            "text": "Import SocraTeach, SciQ or your own JSONL/CSV; every import shows where its items went.",
            "url": reverse("audits:questionbank"),
        },
        {
            "title": "Design the conditions",
            "text": "Persona statements, names by gender × ethnicity, the opposite 2 × 2, and prompt templates.",
            "url": reverse("audits:design"),
        },
        {
            "title": "Preview an audit design",
            "text": "Dialogues, model calls and pairs per contrast before you spend anything.",
            "url": reverse("audits:design-preview"),
        },
    ]


# --- audit engine: audits and model endpoints ---------------------------------------------------------

NAV_LINKS += [(RESEARCHER, "Audits", "audits:audits"), (RESEARCHER, "Models", "audits:endpoints")]
_design_steps = home_steps


def home_steps(user: User) -> list[dict]:  # noqa: F811  (extends the question-bank steps above)
    steps = _design_steps(user)
    if not has_role(user, RESEARCHER):
        return steps
    latest = Audit.objects.order_by("-created_at", "-id").first()
    steps.append(
        {
            "title": "Run an audit" if latest is None else f"Audits (latest: {latest.name} — {latest.status})",
            "text": "Tutors, one fixed student and a judge over your questions and conditions; live progress, "
            "pause/resume, and a ledger so no model call is paid for twice.",
            "url": reverse("audits:audits") if latest is None else reverse("audits:audit-detail", args=[latest.pk]),
        }
    )
    steps.append(
        {
            "title": "Connect models",
            "text": "Any OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, …) or the seeded simulation.",
            "url": reverse("audits:endpoints"),
        }
    )
    return steps


# --- fairness results: the researchers' dashboard -------------------------------------------------------

NAV_LINKS.insert(0, (RESEARCHER, "Dashboard", "audits:dashboard"))
_engine_steps = home_steps


def home_steps(user: User) -> list[dict]:  # noqa: F811  (extends the steps above)
    steps = _engine_steps(user)
    if has_role(user, RESEARCHER):
        steps.insert(
            0,
            {
                "title": "Audits dashboard",
                "text": "Every audit with its progress, the latest fairness results, compare audits or tutors.",
                "url": reverse("audits:dashboard"),
            },
        )
    return steps
