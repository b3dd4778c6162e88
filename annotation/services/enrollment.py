"""Writes for enrolment: putting annotators into a stage, and marking a replacement for a recruit who
failed the gate (or left), so the pass-rate table can say how the workforce was filtered."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from annotation.models import Enrollment, Stage
from annotation.services.training import SetupError
from edufair_web.accounts.roles import ANNOTATOR, has_role


@transaction.atomic
def enrollment_create(*, stage: Stage, user, subject: str = "") -> Enrollment:
    """Enrol a user (annotator role) in a stage; enrolling twice returns the existing enrolment."""
    if not has_role(user, ANNOTATOR):
        raise SetupError(f"{user.username} does not have the annotator role.")
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
        replacement = enrollment_create(stage=enrollment.stage, user=replacement_user, subject=enrollment.subject)
    enrollment.status = Enrollment.Status.REPLACED
    enrollment.replaced_by = replacement
    enrollment.replaced_at = timezone.now()
    enrollment.replacement_note = note
    enrollment.save(update_fields=["status", "replaced_by", "replaced_at", "replacement_note"])
    return enrollment
