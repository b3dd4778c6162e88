"""Middleware that keeps a crowd recruit's place while they work: every page they open counts as seen.

A recruit who was released (idle past the link's reservation time, or returned the study) and opens a page again
is taken back while a place is free; otherwise they are signed out with the reason."""

from django.contrib.auth import logout
from django.http import JsonResponse
from django.shortcuts import render

from annotation.services.crowd import CrowdRefused
from annotation.services.crowd_entry import crowd_seen
from annotation.views.crowd import CROWD_SESSION_KEY

# The crowd pages decide for themselves (entry, return, completion); static files and log-out need no place.
PASS_THROUGH = ("/annotation/crowd/", "/static/", "/accounts/logout/", "/healthz")


class CrowdPresenceMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        recruit_id = request.session.get(CROWD_SESSION_KEY)
        if recruit_id is not None and request.user.is_authenticated and not request.path.startswith(PASS_THROUGH):
            try:
                crowd_seen(recruit_id=recruit_id, user_id=request.user.pk)
            except CrowdRefused as exc:
                logout(request)
                if request.path.startswith("/api/"):
                    return JsonResponse({"detail": str(exc)}, status=403)
                return render(request, "annotation/crowd/refused.html", {"message": str(exc)}, status=403)
        return self.get_response(request)
