"""API tokens (django-rest-knox's `AuthToken`: only a digest is stored): issue one, list a user's, revoke them."""

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils import timezone
from knox.models import AuthToken


@transaction.atomic
def api_token_issue(*, user: User) -> tuple[AuthToken, str]:
    """A new token for ``user`` (valid for `API_TOKEN_TTL_HOURS`), and the token itself: shown once, never stored.
    The user's expired tokens are deleted on the way."""
    user.auth_token_set.filter(expiry__lte=timezone.now()).delete()
    return AuthToken.objects.create(user=user)


def api_tokens_of(*, user: User) -> QuerySet[AuthToken]:
    """The user's tokens that still open the API, newest first."""
    return user.auth_token_set.filter(Q(expiry__gt=timezone.now()) | Q(expiry__isnull=True)).order_by("-created")


def api_token_revoke(*, user: User, token_key: str) -> int:
    """Delete the user's token(s) whose first characters are ``token_key``; the number deleted (0: none of theirs)."""
    deleted, _ = user.auth_token_set.filter(token_key=token_key).delete()
    return deleted


def api_tokens_revoke_all(*, user: User) -> int:
    deleted, _ = user.auth_token_set.all().delete()
    return deleted
