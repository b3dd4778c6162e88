"""People from the UI and the API: who may create, invite and deactivate whom, and the one-time invitation link.

Researchers bring in annotators and adjudicators; operators manage every role (researchers and operators too).
An invitation is Django's password-reset token for the user (`default_token_generator`): it expires after
`PASSWORD_RESET_TIMEOUT` and stops working once the password is set (the token hashes the password).
"""

from __future__ import annotations

import re

from django.contrib.auth.models import User
from django.contrib.auth.password_validation import validate_password
from django.contrib.auth.tokens import default_token_generator
from django.db import transaction
from django.db.models import QuerySet
from django.urls import reverse
from django.utils.encoding import force_bytes, force_str
from django.utils.http import urlsafe_base64_decode, urlsafe_base64_encode

from .link_only import LINK_ONLY, signs_in_by_link_only
from .roles import ADJUDICATOR, ANNOTATOR, OPERATOR, RESEARCHER, ROLES, has_role, user_roles, user_set_role

# Which roles each managing role may create, invite and deactivate.
MANAGES = {RESEARCHER: frozenset({ANNOTATOR, ADJUDICATOR}), OPERATOR: frozenset(ROLES)}
USERNAME_RE = re.compile(r"^[\w.@+-]{1,150}$")
LOOKUP_LIMIT = 50


class PeopleError(ValueError):
    """A people operation refused, with a message fit for the person who asked."""


def manageable_roles(by: User) -> frozenset[str]:
    roles = user_roles(by)
    return frozenset().union(*(MANAGES.get(role, frozenset()) for role in roles))


def may_manage(*, by: User, user: User) -> bool:
    """`by` may invite or deactivate `user`: every role `user` holds is one `by` manages (never oneself)."""
    if by.pk == user.pk or (user.is_superuser and not by.is_superuser):
        return False
    held = user_roles(user)
    return bool(held) and held <= manageable_roles(by)


def may_invite(*, by: User, user: User) -> bool:
    """`person_invite_path` would give `by` a link for `user`."""
    try:
        _invite_check(by=by, user=user)
    except PeopleError:
        return False
    return True


@transaction.atomic
def person_create(*, by: User, username: str, role: str, email: str = "") -> User:
    """A new user with one role and no usable password (they set one through their invitation)."""
    username = (username or "").strip()
    if not USERNAME_RE.match(username):
        raise PeopleError("A username is 1 to 150 letters, digits and @ . + - _ characters.")
    if role not in ROLES:
        raise PeopleError(f"Unknown role {role!r}; choose one of {', '.join(ROLES)}.")
    if role not in manageable_roles(by):
        raise PeopleError(f"Your role may not create a user with the {role} role.")
    if User.objects.filter(username__iexact=username).exists():
        raise PeopleError(f"The username {username} is taken.")
    user = User(username=username, email=(email or "").strip())
    user.set_unusable_password()
    user.save()
    user_set_role(user=user, role=role)
    return user


def person_invite_path(*, by: User, user: User) -> str:
    """The path of a one-time link where `user` sets their password (the caller makes it absolute). Researchers
    invite people who have no password yet; operators may also send one to reset a password."""
    _invite_check(by=by, user=user)
    uid = urlsafe_base64_encode(force_bytes(user.pk))
    return reverse("annotation:invite-accept", args=[uid, default_token_generator.make_token(user)])


def _invite_check(*, by: User, user: User) -> None:
    if signs_in_by_link_only(user):  # a password would let whoever set it label as the participant
        raise PeopleError(f"{user.username}: {LINK_ONLY}.")
    if not may_manage(by=by, user=user):
        raise PeopleError(f"Your role may not invite {user.username}.")
    if not user.is_active:
        raise PeopleError(f"{user.username} is deactivated.")
    # A link for someone who has a password would reset it: that is an operator's act, not a researcher's
    # (it would let a researcher sign in as an annotator).
    if user.has_usable_password() and not has_role(by, OPERATOR):
        raise PeopleError(f"{user.username} has set a password already; an operator can reset it.")


INVALID_INVITATION = "This invitation link is not valid: it was used already, has expired, or was mistyped."


def invitation_user(*, uidb64: str, token: str, lock: bool = False) -> User:
    """The active user a one-time link (the two last parts of its path) is for, while the link still works
    (``lock``: their row locked, so two uses of one link at once set one password)."""
    users = User.objects.select_for_update() if lock else User.objects
    try:
        user = users.get(pk=int(force_str(urlsafe_base64_decode(uidb64))))
    except (TypeError, ValueError, OverflowError, User.DoesNotExist):
        raise PeopleError(INVALID_INVITATION) from None
    if not user.is_active or not default_token_generator.check_token(user, token):
        raise PeopleError(INVALID_INVITATION)
    if signs_in_by_link_only(user):  # a link made before crowd participants were refused invitations
        raise PeopleError(f"This invitation is for a crowd participant: {LINK_ONLY}.")
    return user


@transaction.atomic
def invitation_accept(*, uidb64: str, token: str, password: str) -> User:
    """Set the invitee's password through their one-time link, as the invitation page does: the password must
    pass Django's validators (their `ValidationError` is raised as it is), and the link stops working."""
    user = invitation_user(uidb64=uidb64, token=token, lock=True)
    validate_password(password, user)
    user.set_password(password)
    user.save(update_fields=["password"])
    return user


@transaction.atomic
def person_deactivate(*, by: User, user: User) -> User:
    """Deactivate a user: their sessions and API tokens stop working; their labels stay."""
    if not may_manage(by=by, user=user):
        raise PeopleError(f"Your role may not deactivate {user.username}.")
    user.is_active = False
    user.save(update_fields=["is_active"])
    return user


def people_lookup(*, by: User, username: str = "") -> QuerySet[User]:
    """Users whose username contains `username` (case-insensitive), with the roles `by` manages or sees."""
    if not has_role(by, RESEARCHER, OPERATOR):
        return User.objects.none()
    visible = manageable_roles(by) | ({RESEARCHER} if has_role(by, RESEARCHER) else set())
    found = User.objects.filter(groups__name__in=visible).distinct().order_by("username")
    if username.strip():
        found = found.filter(username__icontains=username.strip())
    return found.prefetch_related("groups")[:LOOKUP_LIMIT]


def person_role(user: User) -> str:
    held = user_roles(user)
    return next((role for role in ROLES if role in held), "")
