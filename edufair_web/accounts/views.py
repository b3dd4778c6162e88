"""Pages of the project shell: home (what to do next, by role), /healthz, and the system page."""

from django.contrib.auth.mixins import LoginRequiredMixin
from django.http import JsonResponse
from django.views.generic import TemplateView

from .permissions import ResearcherRequiredMixin
from .selectors import system_health


class HomeView(LoginRequiredMixin, TemplateView):
    template_name = "home.html"

    def get_context_data(self, **kwargs):
        from .home import next_steps

        context = super().get_context_data(**kwargs)
        context["next_steps"] = next_steps(self.request.user)
        return context


def healthz(request):
    """Database, broker and the last worker heartbeat, for load balancers and people alike."""
    report = system_health()
    return JsonResponse(report, status=200 if report["status"] == "ok" else 503)


class SystemView(ResearcherRequiredMixin, TemplateView):
    template_name = "accounts/system.html"

    def get_context_data(self, **kwargs):
        from django.conf import settings

        context = super().get_context_data(**kwargs)
        context["health"] = system_health()
        context["database_engine"] = settings.DATABASES["default"]["ENGINE"].rsplit(".", 1)[-1]
        context["broker_scheme"] = settings.CELERY_BROKER_URL.split("://", 1)[0]
        return context
