"""The roles, kept as Django groups, and the questions every view and serializer asks of them.

Researchers, adjudicators and annotators do the research; an operator runs the installation (users, API tokens,
lockouts and workers in the admin) and sees none of the research through that role.
"""

from django.contrib.auth.models import AnonymousUser, Group, User

RESEARCHER = "researcher"
ADJUDICATOR = "adjudicator"
ANNOTATOR = "annotator"
OPERATOR = "operator"
ROLES = (RESEARCHER, ADJUDICATOR, ANNOTATOR, OPERATOR)
STAFF_ROLES = (RESEARCHER, OPERATOR)  # staff: they enter the admin site, each to their own models


def user_roles(user: User | AnonymousUser) -> set[str]:
    """Roles of a user; a superuser holds all of them. Cached on the user object per request."""
    if not user.is_authenticated:
        return set()
    cached = getattr(user, "_edufair_roles", None)
    if cached is None:
        if user.is_superuser:
            cached = set(ROLES)
        else:
            cached = set(user.groups.filter(name__in=ROLES).values_list("name", flat=True))
        user._edufair_roles = cached
    return cached


def remember_roles(user: User, row) -> None:
    """Cache on ``user`` the roles that ``row`` carries as ``has_role_<role>`` flags (read with the user by
    `authentication.RoleTokenAuthentication`): what `user_roles` would otherwise query."""
    user._edufair_roles = set(ROLES) if user.is_superuser else {r for r in ROLES if getattr(row, f"has_role_{r}")}


def has_role(user: User | AnonymousUser, *roles: str) -> bool:
    return bool(user_roles(user) & set(roles))


def user_set_role(*, user: User, role: str) -> None:
    """Give a user one role (replacing any other); researchers and operators are staff (they enter the admin site,
    each to their own models)."""
    if role not in ROLES:
        raise ValueError(f"unknown role {role!r}; choose one of {', '.join(ROLES)}")
    user.groups.remove(*Group.objects.filter(name__in=ROLES))
    user.groups.add(Group.objects.get_or_create(name=role)[0])  # get_or_create: survives a flushed test database
    user_staff_follow_roles(user=user)


def user_staff_follow_roles(*, user: User) -> None:
    """Make a user staff exactly when one of their roles is (after their role groups changed)."""
    user.__dict__.pop("_edufair_roles", None)
    user.is_staff = user.groups.filter(name__in=STAFF_ROLES).exists()
    user.save(update_fields=["is_staff"])
