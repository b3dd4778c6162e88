"""Downloads of an audit's results (researchers only): CSV tables, methods, JSON and the HTML report."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from django.views import View

from audits.http_exports import analysis_state_response, export_response
from audits.models import Audit
from audits.services.analysis import AnalysisState
from audits.views.results_pages import analysis_for_request
from edufair_web.accounts.permissions import ResearcherRequiredMixin


class ResultsExportView(ResearcherRequiredMixin, View):
    """Download: ?format=csv&table=<name> | parquet&table=<name> | methods (the CSVs' sidecar) | json | html, under the
    page's parameters (202 while computing)."""

    def get(self, request, pk: int):
        audit = get_object_or_404(Audit, pk=pk)
        analysis, _ = analysis_for_request(audit, request.GET)
        if isinstance(analysis, AnalysisState):
            return analysis_state_response(analysis)
        return export_response(analysis, request.GET.get("format", "csv"), request.GET.get("table", "contrasts"))
