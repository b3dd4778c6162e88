"""The crowd pages' "I do not consent / leave" action: the recruit is recorded as not consented and shown that code.

A recruit who had finished already keeps their outcome and code; either way they land on the completion page."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.shortcuts import redirect
from django.views import View

from annotation.services.crowd_outcomes import crowd_leave
from annotation.views.crowd import session_recruit


class CrowdLeaveView(View):
    def post(self, request, key):
        recruit = session_recruit(request)
        if recruit is None or recruit.link.key != key:
            raise PermissionDenied("This action belongs to a participant who arrived through the study's link.")
        crowd_leave(recruit=recruit)
        return redirect("annotation:crowd-done", key)
