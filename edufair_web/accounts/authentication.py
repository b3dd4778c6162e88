"""API token authentication that reads the token, its user and the user's roles in one SQL statement:
every API view checks a role, and the labelling requests that dozens of annotators send at once should
pay neither a second query for the roles nor the ORM's cost of building the first (see
`annotation.workflow.main_queries` for the numbers)."""

from django.contrib.auth.models import User
from django.utils.translation import gettext_lazy as _
from rest_framework import exceptions
from rest_framework.authentication import TokenAuthentication
from rest_framework.authtoken.models import Token

from .roles import ROLES, remember_roles

_ROLE_FLAGS = ",\n".join(  # the role names are constants, passed as parameters all the same
    f"""EXISTS (SELECT 1 FROM auth_user_groups ug JOIN auth_group g ON g.id = ug.group_id
               WHERE ug.user_id = u.id AND g.name = %s) AS has_role_{role}"""  # noqa: S608
    for role in ROLES
)
_TOKEN_SQL = f"""
SELECT u.*,
{_ROLE_FLAGS}
FROM authtoken_token t JOIN auth_user u ON u.id = t.user_id
WHERE t.key = %s
"""  # noqa: S608 — constant text; every value is a parameter


class RoleTokenAuthentication(TokenAuthentication):
    """DRF's `TokenAuthentication` (same header, same errors), with token, user and roles read at once."""

    def authenticate_credentials(self, key):
        user = next(iter(User.objects.raw(_TOKEN_SQL, [*ROLES, key])), None)
        if user is None:
            raise exceptions.AuthenticationFailed(_("Invalid token."))
        if not user.is_active:
            raise exceptions.AuthenticationFailed(_("User inactive or deleted."))
        remember_roles(user, user)
        return user, Token(key=key, user=user)  # request.auth: the key and its user (nothing reads `created`)
