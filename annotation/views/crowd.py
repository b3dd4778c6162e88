"""Crowd pages: the entry link that signs a participant in, and the completion page.

A platform sends its participant to the entry link with their ids; they are signed in as their pseudonymous annotator,
with no password. The completion page shows the code, then leads back to the platform."""

from __future__ import annotations

import math

from django.contrib.auth import login
from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404, redirect, render
from django.views import View

from annotation.models import CrowdLink, CrowdRecruit
from annotation.services.crowd import (
    CrowdRefused,
    arrival_from_query,
    completion_code,
    completion_redirect,
    crowd_enter,
    crowd_finish,
    crowd_outcome,
)
from edufair_web.accounts.throttles import CrowdEntryRateThrottle

CROWD_SESSION_KEY = "annotation_crowd_recruit"
# Seconds the completion page shows the code before it sends the participant back to the platform.
COMPLETION_REDIRECT_SECONDS = 3


def session_recruit(request) -> CrowdRecruit | None:
    """The crowd recruit this session was opened for, if it is still the signed-in user."""
    recruit_id = request.session.get(CROWD_SESSION_KEY)
    if recruit_id is None or not request.user.is_authenticated:
        return None
    return CrowdRecruit.objects.select_related("link", "user").filter(pk=recruit_id, user=request.user).first()


class CrowdEntryView(View):
    def get(self, request, key):
        throttle = CrowdEntryRateThrottle()
        if not throttle.allow_request(request, self):
            wait = math.ceil(throttle.wait() or 1)
            response = render(request, "registration/throttled.html", {"wait_seconds": wait}, status=429)
            response["Retry-After"] = str(wait)
            return response
        link = get_object_or_404(CrowdLink.objects.select_related("stage"), key=key)
        try:
            recruit, _ = crowd_enter(link=link, arrival=arrival_from_query(link=link, params=request.GET))
        except CrowdRefused as exc:
            return render(request, "annotation/crowd/refused.html", {"message": str(exc)}, status=403)
        login(request, recruit.user, backend="django.contrib.auth.backends.ModelBackend")
        request.session[CROWD_SESSION_KEY] = recruit.pk
        if crowd_outcome(recruit):
            return redirect("annotation:crowd-done", link.key)
        return redirect("annotation:training-stage", link.stage_id)


class CrowdDoneView(View):
    def get(self, request, key):
        recruit = session_recruit(request)
        if recruit is None or recruit.link.key != key:
            raise PermissionDenied("This page belongs to a participant who arrived through the study's link.")
        outcome = crowd_outcome(recruit)
        if not outcome:
            return redirect("annotation:training-stage", recruit.link.stage_id)
        recruit = crowd_finish(recruit=recruit, outcome=outcome)
        context = {
            "recruit": recruit,
            "code": completion_code(recruit),
            "redirect_url": completion_redirect(recruit),
            "seconds": COMPLETION_REDIRECT_SECONDS,
        }
        return render(request, "annotation/crowd/done.html", context)
