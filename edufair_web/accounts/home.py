"""What each role can do next, shown on the home page.

Each app contributes its own steps through a `home_steps(user)` function in its `home` module,
so the shell does not need to know the apps' models.
"""

from importlib import import_module
from importlib.util import find_spec

from django.contrib.auth.models import User
from django.urls import reverse

from .roles import OPERATOR, RESEARCHER, has_role

APPS_WITH_STEPS = ("audits", "annotation")


def next_steps(user: User) -> list[dict]:
    steps: list[dict] = []
    for app in APPS_WITH_STEPS:
        if find_spec(f"{app}.home") is not None:
            steps.extend(import_module(f"{app}.home").home_steps(user))
    if has_role(user, RESEARCHER, OPERATOR):
        steps.append(
            {
                "title": "Check the system",
                "text": "See whether the database, the broker and the workers are answering.",
                "url": reverse("system"),
            }
        )
    if has_role(user, OPERATOR):
        steps.append(
            {
                "title": "Manage users and tokens",
                "text": "Add users, give them a role, revoke API tokens and lift lockouts in the admin.",
                "url": reverse("admin:index"),
            }
        )
    if has_role(user, RESEARCHER):
        steps.append(
            {
                "title": "Script it through the API",
                "text": "Every page has an API twin; the OpenAPI documentation lists them all.",
                "url": reverse("swagger-ui"),
            }
        )
    return steps
