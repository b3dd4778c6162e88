"""The judge-corrected results page of an audit (researchers only) and its CSV / JSON downloads.

The page puts the judge-only flags of the analysis beside the PPI++ differences that rest on the audit's
human-labelled turns, disagreeing cells first, with the cue check and a heatmap of both readings.

Like the other results pages it reads one `AuditAnalysis` under the GET form's parameters (the judge-only flags are
that analysis's violations) and shows the progress state while the analysis is not ready.
"""

from __future__ import annotations

from urllib.parse import urlencode

from django.shortcuts import get_object_or_404
from django.urls import reverse
from django.views import View
from django.views.generic import TemplateView

from audits.heatmap_figures import pairs_href
from audits.http_exports import analysis_state_response, judge_corrected_export_response
from audits.judge_corrected_figures import judge_corrected_figures
from audits.judge_corrected_table import CorrectedCell
from audits.models import Audit
from audits.services.analysis import AnalysisState
from audits.services.judge_corrected import judge_corrected_results
from audits.views.results_pages import ResultsPageMixin, analysis_for_request, safe_figures
from edufair_web.accounts.permissions import ResearcherRequiredMixin


def validation_create_url(audit: Audit) -> str:
    """The annotation app's page that builds a judge-validation project, with this audit chosen."""
    return f"{reverse('annotation:judge-validation-create')}?{urlencode({'audit': audit.pk})}"


class JudgeCorrectedView(ResultsPageMixin, TemplateView):
    template_name = "audits/results/judge_corrected.html"

    def _pairs_link(self, cell: CorrectedCell) -> str:
        return pairs_href(self.link, tutor=cell.tutor_id, domain=cell.domain, row=cell)

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context.update(self.base_context())
        results = judge_corrected_results(self.audit, analysis=self.analysis)
        export_url = reverse("audits:results-judge-corrected-export", args=[self.audit.pk])
        context.update(
            {
                "judge_corrected": results,
                "judge_corrected_rows": [{"cell": cell, "href": self._pairs_link(cell)} for cell in results.cells],
                "judge_corrected_figures": safe_figures(judge_corrected_figures(results.cells, self._pairs_link)),
                "validation_create_url": validation_create_url(self.audit),
                "csv_url": f"{export_url}?{self.query}&format=csv",
                "json_url": f"{export_url}?{self.query}&format=json",
            }
        )
        return context


class JudgeCorrectedExportView(ResearcherRequiredMixin, View):
    """Download the judge-corrected table: ?format=csv | json, under the page's parameters (202 while computing)."""

    def get(self, request, pk: int):
        audit = get_object_or_404(Audit, pk=pk)
        analysis, _ = analysis_for_request(audit, request.GET)
        if isinstance(analysis, AnalysisState):
            return analysis_state_response(analysis)
        return judge_corrected_export_response(analysis, request.GET.get("format", "csv"))
