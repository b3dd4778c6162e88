"""Every POST needs the CSRF token: pages, htmx requests, the session-authenticated API and the admin.

The URL list is derived from the URL conf (every pattern, the admin's and the API router's included), so a
new page is covered without editing this test. Each URL gets, from a logged-in researcher's browser-like
client (`enforce_csrf_checks=True`):

- a POST without the token — refused with 403 and a CSRF reason (Django's middleware for pages and the
  admin; DRF's SessionAuthentication for the API, which also refuses before the handler runs);
- the same POST marked as an htmx request (`HX-Request: true`) — refused the same way;
- a POST with the token (cookie + `X-CSRFToken` header, as templates/base.html's `hx-headers` sends it) —
  not refused for CSRF, which shows the 403s above are the token's doing and not something else.

The templates are also read: every `<form method="post">` carries `{% csrf_token %}`, and the base layout
gives htmx the token.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.admindocs.views import extract_views_from_urlpatterns, simplify_regex
from django.middleware.csrf import _get_new_csrf_string
from django.test import Client
from django.urls import Resolver404, get_resolver, resolve

pytestmark = pytest.mark.django_db

# Values for path placeholders; anything else becomes "1". CSRF is checked before any view code runs, so
# the objects need not exist — the URL only has to resolve.
PLACEHOLDER_VALUES = {
    "action": "pause",
    "app_label": "auth",
    "format": "json",
    "fmt": "csv",
    "hostname": "worker-1",
    "phase": "pilot",
}


def every_url() -> list[str]:
    urls = set()
    for _view, regex, _namespace, _name in extract_views_from_urlpatterns(get_resolver().url_patterns):
        template = simplify_regex(regex).replace("\\.", ".")
        urls.add(re.sub(r"<(?:(\w+):)?(\w+)>", placeholder_value, template))
    return sorted(urls)


def placeholder_value(match: re.Match) -> str:
    converter, name = match.groups()
    if converter == "drf_format_suffix":  # DRF's converter includes the dot: /api/.json
        return ".json"
    return PLACEHOLDER_VALUES.get(name, "1")


def is_csrf_refusal(response) -> bool:
    """403 from Django's CSRF failure view or from DRF's SessionAuthentication (not any 403: every page's
    layout names X-CSRFToken, so a permission-denied page mentions CSRF too)."""
    body = response.content
    # DRF's message is in `response.data`; a view rendering HTML (Swagger UI) does not repeat it in the body.
    detail = str((getattr(response, "data", None) or {}).get("detail", ""))
    return response.status_code == 403 and (
        b"CSRF verification failed" in body or b"CSRF Failed" in body or detail.startswith("CSRF Failed")
    )


def test_the_url_list_covers_the_whole_url_conf():
    urls = every_url()
    unresolvable = []
    for url in urls:
        try:
            resolve(url)
        except Resolver404:
            unresolvable.append(url)
    assert not unresolvable, f"add placeholder values so these patterns resolve: {unresolvable}"
    # Pages of both apps, the API and the admin are all in the list.
    for expected in ("/audits/runs/1/pause/", "/annotation/label/1/", "/api/audits/1/launch/", "/admin/auth/user/"):
        assert expected in urls


# Routes that read no cookie: the one-time invitation link in the path is the credential, the view ignores the
# session (authentication_classes = ()) and answers no session cookie, so a forged cross-site POST carries
# nothing the link's holder does not already have. Checked below to stay that way.
NO_COOKIE_CREDENTIAL = {"/api/annotation/people/welcome/1/1/"}


def test_every_url_refuses_a_post_without_the_token(researcher):
    not_refused, refused_with_token = [], []
    for url in every_url():
        if url in NO_COOKIE_CREDENTIAL:
            client = Client(enforce_csrf_checks=True, raise_request_exception=False)
            client.force_login(researcher)
            response = client.post(url, {"password": "a-long-enough-password-1"})
            assert response.status_code == 400 and settings.SESSION_COOKIE_NAME not in response.cookies, url
            assert resolve(url).func.cls.authentication_classes == (), url
            continue
        client = Client(enforce_csrf_checks=True, raise_request_exception=False)
        client.force_login(researcher)
        # Empty bodies: the requests that pass CSRF then fail validation rather than change data.
        plain = client.post(url)
        htmx = client.post(url, headers={"HX-Request": "true"})
        for kind, response in (("form", plain), ("htmx", htmx)):
            if not is_csrf_refusal(response):
                not_refused.append(f"{kind} POST {url} -> {response.status_code}")

        token = _get_new_csrf_string()
        client.cookies[settings.CSRF_COOKIE_NAME] = token
        with_token = client.post(url, headers={"HX-Request": "true", "X-CSRFToken": token})
        if is_csrf_refusal(with_token):
            refused_with_token.append(f"{url} -> {with_token.content[:300]!r}")
    assert not not_refused, "POST accepted without a CSRF token:\n" + "\n".join(not_refused)
    assert not refused_with_token, "POST refused even with the token:\n" + "\n".join(refused_with_token)


def test_an_anonymous_login_post_needs_the_token():
    client = Client(enforce_csrf_checks=True)
    response = client.post("/accounts/login/", {"username": "someone", "password": "anything-at-all"})
    assert is_csrf_refusal(response)


FORM_RE = re.compile(r"<form\b[^>]*>.*?</form>", re.IGNORECASE | re.DOTALL)
POST_RE = re.compile(r"""method\s*=\s*["']?post""", re.IGNORECASE)


def template_files() -> list[Path]:
    return sorted((Path(settings.BASE_DIR) / "templates").rglob("*.html"))


INCLUDE_RE = re.compile(r"""{%\s*include\s+["']([^"']+)["'][^%]*%}""")


def with_includes(text: str, depth: int = 0) -> str:
    """The template's text with `{% include %}`d templates pasted in (a token may sit in an include)."""
    if depth > 5:
        return text

    def paste(match: re.Match) -> str:
        candidate = Path(settings.BASE_DIR) / "templates" / match.group(1)
        return with_includes(candidate.read_text(), depth + 1) if candidate.exists() else match.group(0)

    return INCLUDE_RE.sub(paste, text)


def test_every_post_form_in_the_templates_carries_the_token():
    missing = []
    forms = 0
    for path in template_files():
        for form in FORM_RE.findall(with_includes(path.read_text())):
            opening = form.split(">", 1)[0]
            if POST_RE.search(opening):
                forms += 1
                if "{% csrf_token %}" not in form:
                    missing.append(f"{path.relative_to(settings.BASE_DIR)}: {opening}>")
    assert forms > 10, "the templates should have many POST forms; is the template search broken?"
    assert not missing, "POST forms without {% csrf_token %}:\n" + "\n".join(missing)


def test_htmx_requests_carry_the_token_from_the_base_layout():
    base = (Path(settings.BASE_DIR) / "templates" / "base.html").read_text()
    assert re.search(r"""<body[^>]*hx-headers='\{"X-CSRFToken": "\{\{ csrf_token \}\}"\}'""", base)
    # htmx-driven pages extend the base layout, so every hx-post/put/patch/delete inherits the header.
    for path in template_files():
        text = path.read_text()
        if re.search(r"hx-(post|put|patch|delete)=", text) and "{% extends" in text:
            assert '{% extends "base.html" %}' in text or "{% extends 'base.html' %}" in text, path
