"""The demo's users, one per role, with known passwords printed by `make demo`."""

from .roles import ADJUDICATOR, ANNOTATOR, OPERATOR, RESEARCHER
from .services import user_create_with_role

DEMO_USERS = (
    ("researcher", RESEARCHER, "demo-researcher"),
    ("adjudicator", ADJUDICATOR, "demo-adjudicator"),
    ("annotator", ANNOTATOR, "demo-annotator"),
    ("operator", OPERATOR, "demo-operator"),
)


def demo_users_seed() -> list[tuple[str, str, str]]:
    for username, role, password in DEMO_USERS:
        user_create_with_role(username=username, role=role, password=password)
    return list(DEMO_USERS)
