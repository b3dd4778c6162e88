"""A summary cell of the results (researchers only): the contrast rows it averages, each linking to its pairs."""

from __future__ import annotations

from django.http import Http404
from django.views.generic import TemplateView

from audits import heatmap_figures
from audits.views.results_pages import ResultsPageMixin, int_or_404


class ResultsCellView(ResultsPageMixin, TemplateView):
    """The contrast rows one summary cell averages, each linking to its pairs."""

    template_name = "audits/results/cell.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context.update(self.base_context())
        get = self.request.GET
        tutor = int_or_404(get.get("tutor"))
        domain, kind, family, group = (get.get(k, "") for k in ("domain", "kind", "family", "group"))
        rows = self.analysis.summary_rows(tutor=tutor, domain=domain, kind=kind, family=family, group=group)
        if not rows:
            raise Http404("no such cell")
        context.update(
            {
                "tutor_name": self.analysis.tutor_name(tutor),
                "domain": domain,
                "kind": kind,
                "family": family,
                "group": group,
                "rows": [
                    {
                        "row": row,
                        "href": heatmap_figures.pairs_href(self.link, tutor=tutor, domain=domain, row=row),
                    }
                    for row in rows
                ],
            }
        )
        return context
