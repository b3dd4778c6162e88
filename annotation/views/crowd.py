"""Crowd pages: the crowd session's recruit, and the completion page.

A platform sends its participant to the entry link with their ids (`views.crowd_entry`); they are signed in as their
pseudonymous annotator, with no password. The completion page shows the code, then leads back to the platform."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.shortcuts import redirect, render
from django.views import View

from annotation.models import CrowdRecruit
from annotation.selectors.crowd import session_recruit_of
from annotation.services.crowd import (
    completion_code,
    completion_redirect,
    crowd_finish,
    crowd_outcome,
)

CROWD_SESSION_KEY = "annotation_crowd_recruit"
# Seconds the completion page shows the code before it sends the participant back to the platform.
COMPLETION_REDIRECT_SECONDS = 3


def session_recruit(request) -> CrowdRecruit | None:
    """The crowd recruit this session was opened for, if it is still the signed-in user."""
    recruit_id = request.session.get(CROWD_SESSION_KEY)
    if recruit_id is None or not request.user.is_authenticated:
        return None
    return session_recruit_of(recruit_id, request.user)


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
