"""The HTML report of an audit as a page (researchers only), under the page's parameters."""

from __future__ import annotations

from django.http import HttpResponse
from django.urls import reverse
from django.views import View

from audits import exports
from audits.views.results_pages import ResultsPageMixin


class _HTMLReportBody(View):
    def get(self, request, *args, **kwargs):
        export = f"{reverse('audits:results-export', args=[self.audit.pk])}?{self.query}&format=html"
        body = exports.results_html(
            self.analysis, results_url=self._results_url(self.analysis.parameters), download_url=export
        )
        return HttpResponse(body, content_type="text/html; charset=utf-8")


class ResultsReportView(ResultsPageMixin, _HTMLReportBody):
    """The HTML report as a page (the download's template, what the audit found first), under the page's
    parameters; the progress state while its analysis is computed."""
