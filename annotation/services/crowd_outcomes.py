"""Whether a crowd recruit may still work, the one rule every writing door asks, and a recruit's choice to leave.

A recruit who has finished (completed their quota, screened out by the gate, did not consent) writes nothing more:
no label, training answer, comment or revision, on a page or through the API. The refusal names their code, and
their finish is recorded with it if no page had recorded it yet."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.db import transaction

from annotation.models import CrowdRecruit
from annotation.services.assignment import release_reservations
from annotation.services.crowd import completion_code, crowd_finish, crowd_outcome

FINISHED = "You have finished this study; your completion code is {code}."


def crowd_recruit_of(user: User) -> CrowdRecruit | None:
    """The crowd recruit `user` is, if the user was made by a crowd entry link."""
    if user is None or not user.is_authenticated:
        return None
    return CrowdRecruit.objects.select_related("link", "user").filter(user_id=user.pk).first()


def crowd_work_refusal(user: User) -> str:
    """'' when `user` may write (anyone who is not a crowd recruit, and a recruit still working); for a recruit who
    has finished, the message that refuses them, with their code."""
    recruit = crowd_recruit_of(user)
    if recruit is None:
        return ""
    outcome = crowd_outcome(recruit)
    if not outcome:
        return ""
    recruit = crowd_finish(recruit=recruit, outcome=outcome)
    return FINISHED.format(code=completion_code(recruit))


def crowd_may_work(user: User) -> bool:
    return not crowd_work_refusal(user)


@transaction.atomic
def crowd_leave(*, recruit: CrowdRecruit) -> CrowdRecruit:
    """The recruit chose not to consent (or to leave): recorded as not consented, with that outcome's code, unless
    they had finished already (their outcome stays). Their unsubmitted main items go back to the pool at once."""
    recruit = crowd_finish(recruit=recruit, outcome=crowd_outcome(recruit) or CrowdRecruit.Outcome.NOT_CONSENTED)
    release_reservations(stage=recruit.link.stage, annotator=recruit.user)
    return recruit
