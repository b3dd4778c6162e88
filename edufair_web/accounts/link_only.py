"""Users who sign in through a study link only (crowd participants): nobody invites them or gives them a password.

A crowd entry link makes a pseudonymous user with no password (`annotation.models.CrowdRecruit`); a password would let
whoever set it sign in as the participant and label in their name. Every door that would set one refuses with the
same words: the invitation (page and API, `people`), the admin's password page, and any save of a usable password
(commands such as `changepassword` included) through the model signal below; without a password, no API token.
The app registry names the crowd model, as accounts imports nothing of the apps above it."""

from __future__ import annotations

from django.apps import apps
from django.contrib.auth.models import User
from django.db.models.signals import pre_save
from django.dispatch import receiver

LINK_ONLY = "crowd participants sign in through the study link only"


class LinkOnlyRefused(PermissionError):
    """A password, an invitation or a token refused to a crowd participant."""

    def __init__(self) -> None:
        super().__init__(LINK_ONLY)


def signs_in_by_link_only(user: User | None) -> bool:
    """`user` was made by a crowd entry link."""
    if user is None or user.pk is None:
        return False
    return apps.get_model("annotation", "CrowdRecruit").objects.filter(user_id=user.pk).exists()


def refuse_link_only(user: User | None) -> None:
    if signs_in_by_link_only(user):
        raise LinkOnlyRefused()


@receiver(pre_save, sender=User, dispatch_uid="accounts.link_only.no_password")
def no_password_for_link_only_users(sender, instance: User, update_fields=None, raw=False, **kwargs) -> None:
    """The last guard: a crowd participant's row is never saved with a usable password, whichever code sets it."""
    if raw or (update_fields is not None and "password" not in update_fields):
        return
    if instance.has_usable_password():
        refuse_link_only(instance)
