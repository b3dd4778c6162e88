"""The HTML report of an audit as a page (researchers only), under the page's parameters."""

from __future__ import annotations

from urllib.parse import urlencode

from django.http import HttpResponse
from django.urls import reverse
from django.views import View

from audits.services.analysis import ReadyAnalysis, analysis_request_ready
from audits.services.results_report import results_report_html
from audits.views.results_pages import AnalysisParametersForm, ResultsPageMixin, parameters_query


class _HTMLReportBody(View):
    def get(self, request, *args, **kwargs):
        parameters = self.ready.parameters
        export = f"{reverse('audits:results-export', args=[self.audit.pk])}?{urlencode(parameters_query(parameters))}"
        body = results_report_html(
            analysis=self.ready, results_url=self._results_url(parameters), download_url=f"{export}&format=html"
        )
        return HttpResponse(body, content_type="text/html; charset=utf-8")


class ResultsReportView(ResultsPageMixin, _HTMLReportBody):
    """The HTML report as a page (the download's template, what the audit found first), under the page's
    parameters; the progress state while its analysis is computed. The report is rendered once per analysis and
    what it shows (`audits.services.results_report`): a page seen before loads no analysis."""

    def request_analysis(self, query):
        form = AnalysisParametersForm.from_query(query)
        return analysis_request_ready(audit=self.audit, parameters=form.parameters()), form

    def setup_analysis(self, ready: ReadyAnalysis) -> None:
        self.ready = ready
