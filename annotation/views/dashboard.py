"""The researchers' live stage dashboard: the page and the fragment htmx polls.

htmx polls for the fragment while the stage runs (`selectors.stage_dashboard`); the page has links to the project's
report, conflicts and label exports."""

from __future__ import annotations

from django.shortcuts import get_object_or_404, render
from django.views import View

from annotation.models import Stage
from annotation.selectors import exports
from annotation.selectors.stage_dashboard import stage_dashboard
from edufair_web.accounts.permissions import ResearcherRequiredMixin

POLL_SECONDS = 5


def _context(stage: Stage) -> dict:
    return {
        "stage": stage,
        "project": stage.project,
        "dash": stage_dashboard(stage),
        "poll_seconds": POLL_SECONDS,
        "export_formats": exports.FORMATS,
    }


class StageDashboardView(ResearcherRequiredMixin, View):
    def get(self, request, stage_pk):
        stage = get_object_or_404(Stage.objects.select_related("project"), pk=stage_pk)
        return render(request, "annotation/dashboard/stage.html", _context(stage))


class StageDashboardLiveView(ResearcherRequiredMixin, View):
    """The dashboard's body alone: what htmx swaps in on every poll."""

    def get(self, request, stage_pk):
        stage = get_object_or_404(Stage.objects.select_related("project"), pk=stage_pk)
        return render(request, "annotation/dashboard/_body.html", _context(stage))
