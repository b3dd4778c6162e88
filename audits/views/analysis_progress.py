"""An analysis's progress (researchers only): the state polled by htmx, and the retry of a failed analysis."""

from __future__ import annotations

from urllib.parse import urlencode

from django.http import HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.views import View

from audits.models import Audit
from audits.services.analysis import analysis_retry, analysis_state
from audits.views.results_pages import AnalysisParametersForm, parameters_query, progress_context
from edufair_web.accounts.permissions import ResearcherRequiredMixin


class AnalysisStatusView(ResearcherRequiredMixin, View):
    """The progress state alone, polled by htmx; when the analysis is done it answers HX-Refresh, so the
    page that polls (results, cell, pairs, compare) reloads with the results."""

    def get(self, request, pk: int):
        audit = get_object_or_404(Audit, pk=pk)
        parameters = AnalysisParametersForm.from_query(request.GET).parameters()
        state = analysis_state(audit=audit, parameters=parameters)
        if state.done:
            response = HttpResponse('<p class="ok" id="analysis-ready">Results ready; loading…</p>')
            response["HX-Refresh"] = "true"
            return response
        return render(request, "audits/results/_analysis_progress.html", progress_context(audit, state, parameters))


class AnalysisRetryView(ResearcherRequiredMixin, View):
    """POST: compute a failed analysis again. htmx gets the progress state back; a plain form goes to the
    results page."""

    def post(self, request, pk: int):
        audit = get_object_or_404(Audit, pk=pk)
        parameters = AnalysisParametersForm.from_query(request.GET).parameters()
        state = analysis_retry(audit=audit, parameters=parameters)
        if request.headers.get("HX-Request"):
            return render(request, "audits/results/_analysis_progress.html", progress_context(audit, state, parameters))
        query = urlencode(parameters_query(parameters))
        return HttpResponseRedirect(f"{reverse('audits:results', args=[audit.pk])}?{query}")
