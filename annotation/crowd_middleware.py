"""Middleware that ends a finished crowd recruit's work: their pages lead to the code, and their writes are refused.

Finished means their quota is done, the gate screened them out, or they chose not to consent. Every GET of a page leads
to the completion page; every write (POST, PUT, PATCH, DELETE) of a page, and every API request (a GET of the next item
would hold a place), is refused with 403 and their code (`annotation.services.crowd_outcomes.crowd_work_refusal`),
whichever view it was meant for. Only the crowd pages themselves and logging out stay open. A recruit has no password,
so no API token: the session their link opened is their only door."""

from django.http import JsonResponse
from django.shortcuts import redirect, render

from annotation.services.crowd import crowd_outcome
from annotation.services.crowd_outcomes import crowd_work_refusal
from annotation.views.crowd import CROWD_SESSION_KEY, session_recruit

PASS_THROUGH = ("/annotation/crowd/", "/static/", "/api/", "/accounts/logout/", "/healthz")
# Writes a finished recruit may still make: the crowd pages' own actions and logging out.
WRITES_OPEN = ("/annotation/crowd/", "/accounts/logout/")
SAFE_METHODS = ("GET", "HEAD", "OPTIONS", "TRACE")


class CrowdFinishMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if CROWD_SESSION_KEY not in request.session:
            return self.get_response(request)
        api = request.path.startswith("/api/")
        if api or (request.method not in SAFE_METHODS and not request.path.startswith(WRITES_OPEN)):
            refusal = crowd_work_refusal(request.user)
            if refusal:
                if api:
                    return JsonResponse({"detail": refusal}, status=403)
                return render(request, "annotation/crowd/finished.html", {"message": refusal}, status=403)
        if request.method == "GET" and not request.path.startswith(PASS_THROUGH):
            recruit = session_recruit(request)
            if recruit is not None and crowd_outcome(recruit):
                return redirect("annotation:crowd-done", recruit.link.key)
        return self.get_response(request)
