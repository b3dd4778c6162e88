"""The roles a model endpoint plays in an audit (tutor, student, judge): the launch form's lists filter by them."""

TUTOR, STUDENT, JUDGE = "tutor", "student", "judge"
ROLES: tuple[str, ...] = (TUTOR, STUDENT, JUDGE)
# The judge's role covers the reveal/confirm check: both read a tutor turn and answer in JSON.
ROLE_CHOICES: list[tuple[str, str]] = [(TUTOR, "Tutor"), (STUDENT, "Student"), (JUDGE, "Judge (and reveal check)")]


def all_roles() -> list[str]:
    """Every role: an endpoint's default, so an endpoint made before roles existed is offered everywhere."""
    return list(ROLES)


def roles_refusal(value) -> str | None:
    """Why a stored roles value cannot be used, or None: a non-empty list of known roles."""
    if not isinstance(value, list) or not value:
        return f"a non-empty list of roles: {', '.join(ROLES)}"
    unknown = [role for role in value if role not in ROLES]
    if unknown:
        return f"unknown role {str(unknown[0])[:30]!r}; the roles are {', '.join(ROLES)}"
    if len(set(value)) != len(value):
        return "each role at most once"
    return None


def role_refusal(*, role: str, endpoints) -> str | None:
    """Why these endpoints cannot play `role` in an audit, or None: each must list the role. The one rule behind
    every door that creates an audit (the launch form's lists, the API, `run_audit`, a clone)."""
    outside = [endpoint for endpoint in endpoints if role not in (endpoint.roles or ROLES)]
    if not outside:
        return None
    named = ", ".join(f"{endpoint} (roles: {', '.join(endpoint.roles)})" for endpoint in outside)
    label = dict(ROLE_CHOICES)[role].split(" (")[0].lower()
    return (
        f"not set to play the {label}: {named}. Add the role on the endpoint's page, or choose an endpoint that "
        "plays it."
    )
