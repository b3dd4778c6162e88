"""The demo's users, one per role, with known passwords printed by `make demo`."""

from .roles import ADJUDICATOR, ANNOTATOR, OPERATOR, RESEARCHER
from .services import demo_user_ensure

DEMO_USERS = (
    ("researcher", RESEARCHER, "demo-researcher"),
    ("adjudicator", ADJUDICATOR, "demo-adjudicator"),
    ("annotator", ANNOTATOR, "demo-annotator"),
    ("operator", OPERATOR, "demo-operator"),
)


def demo_users_seed() -> list[tuple[str, str, str]]:
    """(username, role, password) of each demo user; the password is "" where the user existed with another one."""
    seeded = []
    for username, role, password in DEMO_USERS:
        user = demo_user_ensure(username=username, role=role, password=password)
        seeded.append((username, role, password if user.check_password(password) else ""))
    return seeded
