"""Middleware that counts the pages of an expensive read (EXPENSIVE_READ_TWINS) in its API's per-user throttle."""

import math

from django.shortcuts import render
from rest_framework.permissions import SAFE_METHODS

from .throttles import EXPENSIVE_PAGES, ExpensiveReadRateThrottle


class ExpensiveReadPageThrottleMiddleware:
    """A signed-in user's GET of a page named in EXPENSIVE_PAGES spends the budget its API twin spends; past it, 429
    with Retry-After and a page that says when to come back. Signed-out requests go on to the log-in redirect."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_view(self, request, view_func, view_args, view_kwargs):
        match = request.resolver_match
        if match is None or match.view_name not in EXPENSIVE_PAGES or request.method not in SAFE_METHODS:
            return None
        if not request.user.is_authenticated:
            return None
        throttle = ExpensiveReadRateThrottle()
        if throttle.allow_request(request, view_func):
            return None
        wait = math.ceil(throttle.wait() or 1)
        response = render(request, "throttled_read.html", {"wait_seconds": wait}, status=429)
        response["Retry-After"] = str(wait)
        return response
