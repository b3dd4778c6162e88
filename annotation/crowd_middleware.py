"""Middleware that sends a finished crowd recruit to the completion page from any page they open.

Finished means their quota is done, or the gate screened them out; so every way out of labelling and training ends with
the code."""

from django.shortcuts import redirect

from annotation.services.crowd import crowd_outcome
from annotation.views.crowd import CROWD_SESSION_KEY, session_recruit

PASS_THROUGH = ("/annotation/crowd/", "/static/", "/api/", "/accounts/logout/", "/healthz")


class CrowdFinishMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if (
            request.method == "GET"
            and CROWD_SESSION_KEY in request.session
            and not request.path.startswith(PASS_THROUGH)
        ):
            recruit = session_recruit(request)
            if recruit is not None and crowd_outcome(recruit):
                return redirect("annotation:crowd-done", recruit.link.key)
        return self.get_response(request)
