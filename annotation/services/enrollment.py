"""Writes for enrolment: annotators into a stage, and replacements for recruits who failed or left.

A replacement is marked for a recruit who failed the gate (or left), so the pass-rate table can say how the workforce
was filtered."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from annotation.models import Enrollment, Stage
from annotation.services.training import SetupError
from annotation.subjects import subject_problem
from edufair_web.accounts.roles import ANNOTATOR, has_role


def enrollment_check(*, user) -> None:
    """Who may be enrolled, on every write (the API, the pages, the admin): an annotator."""
    if not has_role(user, ANNOTATOR):
        raise SetupError(f"{user.username} does not have the annotator role.", field="user")


def enrollment_subject_check(*, stage: Stage, subject: str) -> None:
    """An enrolment's subject is one of the project's (annotation.subjects), on every write."""
    problem = subject_problem(subject, stage.project.subjects or ())
    if problem:
        raise SetupError(problem[:1].upper() + problem[1:], field="subject")


@transaction.atomic
def enrollment_create(*, stage: Stage, user, subject: str = "", subject_copied: bool = False) -> Enrollment:
    """Enrol a user (annotator role) in a stage; enrolling twice returns the existing enrolment. The subject, if
    given, is one of the project's subjects, unless ``subject_copied`` from an enrolment that was accepted then
    (a replacement keeps the subject of the recruit it replaces)."""
    enrollment_check(user=user)
    if not subject_copied:
        enrollment_subject_check(stage=stage, subject=subject)
    enrollment, _ = Enrollment.objects.get_or_create(stage=stage, user=user, defaults={"subject": subject})
    return enrollment


@transaction.atomic
def enrollment_mark_replacement(
    *, enrollment: Enrollment, replacement_user=None, note: str = "", by=None
) -> Enrollment:
    """Mark a recruit as replaced, optionally enrolling the replacement (same stage and subject).

    A recruit who passed cannot be replaced (they reached the data); a failed one or one still in
    training (who left) can. The original's gate decision is kept: a replaced recruit still counts as
    recruited, and as failed if the gate failed them.
    """
    enrollment = Enrollment.objects.select_for_update().get(pk=enrollment.pk)
    if enrollment.status == Enrollment.Status.PASSED:
        raise SetupError("This annotator passed the gate; only failed or departed recruits are replaced.")
    if enrollment.status == Enrollment.Status.REPLACED:
        raise SetupError("This annotator is already replaced.")
    replacement = None
    if replacement_user is not None:
        if Enrollment.objects.filter(stage=enrollment.stage, user=replacement_user).exists():
            raise SetupError(f"{replacement_user.username} is already enrolled in this stage.")
        replacement = enrollment_create(
            stage=enrollment.stage, user=replacement_user, subject=enrollment.subject, subject_copied=True
        )
    enrollment.status = Enrollment.Status.REPLACED
    enrollment.replaced_by = replacement
    enrollment.replaced_at = timezone.now()
    enrollment.replacement_note = note
    enrollment.save(update_fields=["status", "replaced_by", "replaced_at", "replacement_note"])
    return enrollment


def usernames_parse(text: str) -> list[str]:
    """Usernames from pasted text: one per line or separated by commas or spaces; duplicates dropped, order kept."""
    seen: dict[str, None] = {}
    for name in text.replace(",", " ").split():
        seen.setdefault(name.strip(), None)
    return list(seen)


@transaction.atomic
def enrollment_bulk_create(*, stage: Stage, usernames: list[str], subject: str = "") -> list[Enrollment]:
    """Enrol every named annotator in the stage, or nobody: unknown, deactivated and non-annotator names are
    reported together and nothing is written. Names already enrolled are kept as they are."""
    if not usernames:
        raise SetupError("Name at least one username.")
    enrollment_subject_check(stage=stage, subject=subject)
    users = {u.username: u for u in User.objects.filter(username__in=usernames)}
    unknown = [name for name in usernames if name not in users]
    inactive = [name for name in usernames if name in users and not users[name].is_active]
    not_annotators = [
        name for name in usernames if name in users and users[name].is_active and not has_role(users[name], ANNOTATOR)
    ]
    problems = []
    if unknown:
        problems.append(f"unknown: {', '.join(unknown)}")
    if inactive:
        problems.append(f"deactivated: {', '.join(inactive)}")
    if not_annotators:
        problems.append(f"without the annotator role: {', '.join(not_annotators)}")
    if problems:
        raise SetupError(f"Nobody was enrolled — {'; '.join(problems)}.")
    return [enrollment_create(stage=stage, user=users[name], subject=subject) for name in usernames]


def annotator_by_username(username: str):
    """The active annotator with this exact username, or a SetupError naming it."""
    user = User.objects.filter(username=(username or "").strip(), is_active=True).first()
    if user is None or not has_role(user, ANNOTATOR):
        raise SetupError(f"No active annotator is called {username.strip()!r}.")
    return user
