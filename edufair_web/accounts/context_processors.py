"""Puts the signed-in user's roles and the role-based navigation into every template."""

from importlib import import_module
from importlib.util import find_spec

from django.urls import reverse

from .home import APPS_WITH_STEPS
from .roles import ADJUDICATOR, ANNOTATOR, OPERATOR, RESEARCHER, user_roles


def _nav_links() -> dict[str, list[dict]]:
    """Each app's `home.NAV_LINKS` holds (role, title, url name) rows."""
    links: dict[str, list[dict]] = {RESEARCHER: [], ADJUDICATOR: [], ANNOTATOR: [], OPERATOR: []}
    for app in APPS_WITH_STEPS:
        if find_spec(f"{app}.home") is None:
            continue
        for role, title, url_name in getattr(import_module(f"{app}.home"), "NAV_LINKS", ()):
            links[role].append({"title": title, "url": reverse(url_name)})
    return links


def _researcher_menus() -> list[dict]:
    """The researcher's many links as one menu per app (the nav then fits one line at 1280 px)."""
    menus = []
    for app in APPS_WITH_STEPS:
        if find_spec(f"{app}.home") is None:
            continue
        rows = [row for row in getattr(import_module(f"{app}.home"), "NAV_LINKS", ()) if row[0] == RESEARCHER]
        if rows:
            links = [{"title": title, "url": reverse(name)} for _, title, name in rows]
            menus.append({"title": app.capitalize(), "links": links})
    return menus


def roles(request) -> dict:
    held = user_roles(request.user) if hasattr(request, "user") else set()
    return {
        "user_roles": sorted(held),
        "is_researcher": RESEARCHER in held,
        "is_adjudicator": ADJUDICATOR in held,
        "is_annotator": ANNOTATOR in held,
        "is_operator": OPERATOR in held,
        "nav_links": _nav_links() if held else {},
        "nav_menus": _researcher_menus() if RESEARCHER in held else [],
    }
