"""Pages of the project shell: log-in, home (what to do next, by role), /healthz, and the system page."""

import math

from django.conf import settings
from django.contrib.auth import views as auth_views
from django.contrib.auth.mixins import LoginRequiredMixin
from django.http import JsonResponse
from django.shortcuts import render
from django.templatetags.static import static
from django.views.generic import RedirectView, TemplateView

from .home import next_steps
from .permissions import OperatorOrResearcherRequiredMixin
from .roles import OPERATOR, RESEARCHER, has_role
from .selectors import GONE, health_status, system_health
from .throttles import LoginRateThrottle


class LoginView(auth_views.LoginView):
    """Django's log-in page; a client address that has tried too many log-ins gets 429 with Retry-After before
    any password is hashed (the token endpoint counts in the same budget)."""

    redirect_authenticated_user = True

    def post(self, request, *args, **kwargs):
        throttle = LoginRateThrottle()
        if not throttle.allow_request(request, self):
            wait = math.ceil(throttle.wait() or 1)
            response = render(request, "registration/throttled.html", {"wait_seconds": wait}, status=429)
            response["Retry-After"] = str(wait)
            return response
        return super().post(request, *args, **kwargs)


class HomeView(LoginRequiredMixin, TemplateView):
    template_name = "home.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context["next_steps"] = next_steps(self.request.user)
        return context


class FaviconView(RedirectView):
    """/favicon.ico, which browsers ask for on their own, to the static icon (resolved per request: the
    static files manifest exists only after collectstatic)."""

    def get_redirect_url(self, *args, **kwargs):
        return static("favicon.svg")


def healthz(request):
    """ "ok" or "error" (503) for load balancers, from a probe a few seconds old at most; the database, broker and
    workers' details, probed live, for signed-in researchers and operators only (worker host names and service
    errors describe the deployment)."""
    if has_role(request.user, RESEARCHER, OPERATOR):
        report = system_health()
    else:
        report = {"status": health_status()}
    return JsonResponse(report, status=200 if report["status"] == "ok" else 503)


class SystemView(OperatorOrResearcherRequiredMixin, TemplateView):
    template_name = "accounts/system.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context["health"] = health = system_health()
        workers = health["worker"]["workers"]
        context["workers_listed"] = [w for w in workers if w["state"] != GONE]
        context["workers_gone"] = len(workers) - len(context["workers_listed"])
        context["gone_minutes"] = settings.WORKER_GONE_SECONDS // 60
        context["silent_seconds"] = settings.WORKER_ALIVE_SECONDS
        context["database_engine"] = settings.DATABASES["default"]["ENGINE"].rsplit(".", 1)[-1]
        context["broker_scheme"] = settings.CELERY_BROKER_URL.split("://", 1)[0]
        return context
