"""Crowd entry pages: the link's start page, the confirming POST that signs the participant in, and returning the study.

The link's GET signs nobody in: it checks what the link trusts and shows a "Start the study" button. The POST (with
its CSRF token) checks everything again from the submitted values, and replaces a session someone else is signed in
with only when the start page said so and the participant confirmed. A browser cookie set here marks possible
duplicates (`workflow.crowd_duplicates`)."""

from __future__ import annotations

import secrets

from django.conf import settings
from django.contrib.auth import login, logout
from django.shortcuts import get_object_or_404, redirect, render
from django.views import View

from annotation.models import CrowdLink
from annotation.selectors.crowd import is_users_recruit
from annotation.services.crowd import CrowdRefused, crowd_outcome, participant_hash
from annotation.services.crowd_entry import CrowdThrottled, crowd_admit, crowd_return, entry_check, entry_from_params
from annotation.views.crowd import CROWD_SESSION_KEY, session_recruit
from edufair_web.accounts.client_address import client_address

BROWSER_COOKIE = "edufair_crowd_browser"
BROWSER_COOKIE_SALT = "annotation.crowd.browser"
BROWSER_COOKIE_AGE = 365 * 24 * 3600
CONFIRM_FIELD = "replace_session"


def _browser(request) -> str:
    return request.get_signed_cookie(BROWSER_COOKIE, default="", salt=BROWSER_COOKIE_SALT, max_age=BROWSER_COOKIE_AGE)


def _with_browser_cookie(request, response, token: str):
    if token and _browser(request) == token:
        return response
    response.set_signed_cookie(
        BROWSER_COOKIE,
        token,
        salt=BROWSER_COOKIE_SALT,
        max_age=BROWSER_COOKIE_AGE,
        secure=settings.SESSION_COOKIE_SECURE,
        httponly=True,
        samesite="Lax",
    )
    return response


def _refused(request, exc: CrowdRefused):
    if isinstance(exc, CrowdThrottled):
        response = render(
            request, "annotation/crowd/busy.html", {"message": str(exc), "wait_seconds": exc.wait}, status=429
        )
        response["Retry-After"] = str(exc.wait)
        return response
    return render(request, "annotation/crowd/refused.html", {"message": str(exc)}, status=403)


def _someone_else(request, link: CrowdLink, participant_id: str):
    """The user signed in on this browser when it is not this participant's recruit, else None."""
    if not request.user.is_authenticated:
        return None
    digest = participant_hash(link=link, participant_id=participant_id)
    mine = is_users_recruit(link=link, participant_hash=digest, user=request.user)
    return None if mine else request.user


class CrowdEntryView(View):
    """GET: the start page (nothing written, nobody signed in). POST: admit the participant and sign them in."""

    def _start_page(self, request, link: CrowdLink, params):
        entry = entry_from_params(link=link, params=params)
        entry_check(link=link, entry=entry)
        carried = {
            name: value
            for name, value in (
                (link.participant_param, entry.arrival.participant_id),
                (link.study_param, entry.arrival.study_id),
                (link.session_param, entry.arrival.session_id),
                (link.signature_param, entry.signature),
            )
            if value
        }
        context = {
            "link": link,
            "carried": carried,
            "signed_in": _someone_else(request, link, entry.arrival.participant_id),
            "confirm_field": CONFIRM_FIELD,
        }
        return render(request, "annotation/crowd/start.html", context)

    def get(self, request, key):
        link = get_object_or_404(CrowdLink.objects.select_related("stage"), key=key)
        token = _browser(request) or secrets.token_urlsafe(16)
        try:
            response = self._start_page(request, link, request.GET)
        except CrowdRefused as exc:
            return _refused(request, exc)
        return _with_browser_cookie(request, response, token)

    def post(self, request, key):
        link = get_object_or_404(CrowdLink.objects.select_related("stage"), key=key)
        token = _browser(request) or secrets.token_urlsafe(16)
        try:
            entry = entry_from_params(link=link, params=request.POST)
            if _someone_else(request, link, entry.arrival.participant_id) and request.POST.get(CONFIRM_FIELD) != "1":
                # Not confirmed: the start page again, which now names the account that would be signed out.
                return self._start_page(request, link, request.POST)
            recruit, _ = crowd_admit(link=link, entry=entry, browser=token, address=client_address(request))
        except CrowdRefused as exc:
            return _refused(request, exc)
        login(request, recruit.user, backend="django.contrib.auth.backends.ModelBackend")
        request.session[CROWD_SESSION_KEY] = recruit.pk
        if crowd_outcome(recruit):
            response = redirect("annotation:crowd-done", link.key)
        else:
            response = redirect("annotation:training-stage", link.stage_id)
        return _with_browser_cookie(request, response, token)


class CrowdReturnView(View):
    """A recruit stops and returns the study: GET asks, POST gives their place and unsubmitted items back and signs
    them out."""

    def get(self, request):
        recruit = session_recruit(request)
        if recruit is None:
            return render(request, "annotation/crowd/returned.html", {"recruit": None}, status=404)
        return render(request, "annotation/crowd/return.html", {"recruit": recruit})

    def post(self, request):
        recruit = session_recruit(request)
        if recruit is None:
            return render(request, "annotation/crowd/returned.html", {"recruit": None}, status=404)
        recruit = crowd_return(recruit=recruit)
        logout(request)
        return render(request, "annotation/crowd/returned.html", {"recruit": recruit})
