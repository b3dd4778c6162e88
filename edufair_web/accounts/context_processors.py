"""Puts the signed-in user's roles and the role-based navigation into every template."""

from importlib import import_module
from importlib.util import find_spec

from django.urls import reverse

from .home import APPS_WITH_STEPS
from .roles import ADJUDICATOR, ANNOTATOR, OPERATOR, RESEARCHER, user_roles


def _app_links() -> list[tuple[str, str, dict]]:
    """(app, role, link) for each row of each app's `home.NAV_LINKS` ((role, title, url name) rows)."""
    rows = []
    for app in APPS_WITH_STEPS:
        if find_spec(f"{app}.home") is None:
            continue
        for role, title, url_name in getattr(import_module(f"{app}.home"), "NAV_LINKS", ()):
            rows.append((app, role, {"title": title, "url": reverse(url_name)}))
    return rows


def _nav_links(rows) -> dict[str, list[dict]]:
    links: dict[str, list[dict]] = {RESEARCHER: [], ADJUDICATOR: [], ANNOTATOR: [], OPERATOR: []}
    for _, role, link in rows:
        links[role].append(link)
    return links


def _researcher_menus(rows) -> list[dict]:
    """The researcher's many links as one menu per app (the nav then fits one line at 1280 px)."""
    menus: dict[str, list[dict]] = {}
    for app, role, link in rows:
        if role == RESEARCHER:
            menus.setdefault(app, []).append(link)
    return [{"title": app.capitalize(), "links": links} for app, links in menus.items()]


def roles(request) -> dict:
    held = user_roles(request.user) if hasattr(request, "user") else set()
    rows = _app_links() if held else []
    return {
        "user_roles": sorted(held),
        "is_researcher": RESEARCHER in held,
        "is_adjudicator": ADJUDICATOR in held,
        "is_annotator": ANNOTATOR in held,
        "is_operator": OPERATOR in held,
        "nav_links": _nav_links(rows) if held else {},
        "nav_menus": _researcher_menus(rows) if RESEARCHER in held else [],
    }
