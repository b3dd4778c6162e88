"""API token authentication that reads the token, its user and the user's roles in one SQL statement.

The tokens are django-rest-knox's hashed, expiring ones. One statement because every API view checks a role, and the
labelling requests that dozens of annotators send at once should pay neither a second query for the roles nor the ORM's
cost of building the first (see `annotation.services.main_sql` for the numbers)."""

import binascii
from hmac import compare_digest

from django.contrib.auth.models import User
from django.db import connection
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from knox.auth import TokenAuthentication
from knox.crypto import hash_token
from knox.models import AuthToken
from knox.settings import CONSTANTS
from rest_framework import exceptions

from .roles import ROLES, remember_roles

_ROLE_FLAGS = ",\n".join(  # the role names are constants, passed as parameters all the same
    f"""EXISTS (SELECT 1 FROM auth_user_groups ug JOIN auth_group g ON g.id = ug.group_id
               WHERE ug.user_id = u.id AND g.name = %s) AS has_role_{role}"""  # noqa: S608
    for role in ROLES
)
# Knox keeps the token's first characters (`token_key`) in clear to find the candidate rows, and the digest of
# the whole token to tell them apart; the expiry is compared by the database, as the ORM would.
_TOKEN_SQL = f"""
SELECT u.*, t.digest AS token_digest, (t.expiry IS NOT NULL AND t.expiry <= %s) AS token_expired,
{_ROLE_FLAGS}
FROM knox_authtoken t JOIN auth_user u ON u.id = t.user_id
WHERE t.token_key = %s
"""  # noqa: S608 — constant text; every value is a parameter


class RoleTokenAuthentication(TokenAuthentication):
    """Knox's `TokenAuthentication` (same `Authorization: Token …` header, same errors; expired tokens are
    deleted when presented), with token, user and roles read at once."""

    def authenticate_credentials(self, token: bytes):
        invalid = exceptions.AuthenticationFailed(_("Invalid token."))
        try:
            token = token.decode("utf-8")
            digest = hash_token(token)
        except (UnicodeDecodeError, TypeError, binascii.Error):
            raise invalid from None
        now = connection.ops.adapt_datetimefield_value(timezone.now())  # as the ORM would pass it
        rows = User.objects.raw(_TOKEN_SQL, [now, *ROLES, token[: CONSTANTS.TOKEN_KEY_LENGTH]])
        user = next((row for row in rows if compare_digest(digest, row.token_digest)), None)
        if user is None:
            raise invalid
        if user.token_expired:
            AuthToken.objects.filter(digest=digest).delete()
            raise invalid
        if not user.is_active:
            raise exceptions.AuthenticationFailed(_("User inactive or deleted."))
        remember_roles(user, user)
        # request.auth: the token as far as this request needs it (its digest names it; `created` and `expiry`
        # are not read here).
        return user, AuthToken(digest=digest, token_key=token[: CONSTANTS.TOKEN_KEY_LENGTH], user=user)
