"""What every results page shares: the parameters form, the analysis of a request, its progress, the page mixin.

Every results page reads one `AuditAnalysis` (audits.services.analysis) under the parameters of the GET form,
so the numbers match the API and the exports. The analysis is computed on a Celery worker: until it is done
a page shows its progress at once (polled with htmx, reloaded when done; a failure shows its error and a
retry button), and an export answers 202 with the progress and a Retry-After header. Metrics whose judge
failed validation are marked "†" in every table and figure, with the same legend line the HTML report has.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import asdict
from urllib.parse import urlencode

from django import forms
from django.http import Http404
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.utils.safestring import mark_safe

from audits import exports, heatmap_figures
from audits.analysis_parameters import DoorParameter, door_parameters
from audits.fairness import AnalysisParameters
from audits.judge_failed_marks import judge_failed_among, summary_cell_metrics
from audits.models import Audit
from audits.run_outcome import FAILED
from audits.selectors.results_pages import audits_with_judge
from audits.selectors.runs import audit_progress, audit_run_outcome
from audits.services.analysis import (
    AnalysisState,
    AuditAnalysis,
    ReadyAnalysis,
    analysis_parameters_from,
    analysis_request,
)
from edufair_web.accounts.permissions import ResearcherRequiredMixin
from edufair_web.converters import parse_id

PARAMETER_FIELDS = tuple(parameter.name for parameter in door_parameters())
RESULTS_LINKS = {"cell": "audits:results-cell", "pairs": "audits:results-pairs"}


def parameter_form_field(parameter: DoorParameter) -> forms.Field:
    """The page's field of one analysis parameter, from its spec."""
    spec = parameter.spec
    common = {"label": spec.label, "help_text": spec.help, "initial": parameter.default}
    if spec.choices:
        return forms.ChoiceField(choices=spec.choices, **common)
    field_class = forms.IntegerField if parameter.kind is int else forms.FloatField
    return field_class(min_value=spec.minimum, max_value=spec.maximum, **common)


class _ParametersForm(forms.Form):
    @classmethod
    def from_query(cls, query) -> AnalysisParametersForm:
        """Bound to the query string, with defaults for whatever it leaves out."""
        data = {name: field.initial for name, field in cls.base_fields.items()}
        data.update({name: query.get(name) for name in cls.base_fields if query.get(name) not in (None, "")})
        form = cls(data)
        form.is_valid()
        return form

    def parameters(self) -> AnalysisParameters:
        if not self.is_valid():
            return AnalysisParameters()
        return analysis_parameters_from(self.cleaned_data)


AnalysisParametersForm = type(
    "AnalysisParametersForm",
    (_ParametersForm,),
    {
        "__module__": __name__,
        "__doc__": "The parameters a reader may change on the page (GET): every door's, with the spec's defaults.",
        **{parameter.name: parameter_form_field(parameter) for parameter in door_parameters()},
    },
)


def parameters_query(parameters: AnalysisParameters) -> dict[str, str]:
    return {name: str(getattr(parameters, name)) for name in PARAMETER_FIELDS}


def analysis_for_request(audit: Audit, query) -> tuple[AuditAnalysis | AnalysisState, AnalysisParametersForm]:
    """The analysis under the query's parameters if it is ready, else where its computation stands."""
    form = AnalysisParametersForm.from_query(query)
    return analysis_request(audit=audit, parameters=form.parameters()), form


def progress_context(audit: Audit, state: AnalysisState, parameters: AnalysisParameters) -> dict:
    """What templates/audits/results/_analysis_progress.html needs for one audit's analysis."""
    query = urlencode(parameters_query(parameters))
    return {
        "progress_audit": audit,
        "state": state,
        "cells_done": f"{state.cells_done:,}",
        "cells_total": f"{state.cells_total:,}",
        "status_url": f"{reverse('audits:results-status', args=[audit.pk])}?{query}",
        "retry_url": f"{reverse('audits:results-retry', args=[audit.pk])}?{query}",
    }


def pending_page(request, audit: Audit, state: AnalysisState, parameters: AnalysisParameters, *, results_url=""):
    """A results page (results, cell, pairs) while its analysis is not ready: the progress state, at once."""
    context = {
        "audit": audit,
        "simulation": audit.uses_simulation,
        "simulation_label": exports.SIMULATION_LABEL,
        "results_url": results_url,
        **progress_context(audit, state, parameters),
    }
    return render(request, "audits/results/pending.html", context)


def link_maker(audit: Audit, parameters: AnalysisParameters):
    """Links from figures to the cell and pairs pages, carrying the current parameters."""
    paths = {page: reverse(name, args=[audit.pk]) for page, name in RESULTS_LINKS.items()}
    params = parameters_query(parameters)

    def link(page: str, **values) -> str:
        query = {**{k: str(v) for k, v in values.items()}, **params}
        return f"{paths[page]}?{urlencode(query)}"

    return link


def safe_figures(figures: list[heatmap_figures.Figure]) -> list[dict]:
    # The SVG is built by audits.svg_heatmap with every text escaped.
    return [{"key": f.key, "title": f.title, "note": f.note, "svg": mark_safe(f.svg)} for f in figures]  # noqa: S308


def marked_changes(changes: Sequence, failed: Collection[str], metrics: Sequence[str]) -> list[dict]:
    """Tutor-vs-backbone changes as rows, each with the failed-judge metrics its cells rest on."""
    return [
        {
            **asdict(change),
            "judge_failed": judge_failed_among(summary_cell_metrics(change, metrics), failed),
        }
        for change in changes
    ]


def int_or_404(value) -> int:
    found = parse_id(value or "")
    if found is None:
        raise Http404("bad parameter")
    return found


class ResultsPageMixin(ResearcherRequiredMixin):
    links_back_to_results = True  # the progress state of a cell or pairs page links to the results page

    def get(self, request, *args, **kwargs):
        self.audit = get_object_or_404(audits_with_judge(), pk=kwargs["pk"])
        if audit_run_outcome(audit=self.audit) == FAILED:  # no dialogue to analyse: say why, compute nothing
            progress = audit_progress(audit=self.audit)
            context = {"audit": self.audit, "simulation": self.audit.uses_simulation, "progress": progress}
            context["simulation_label"] = exports.SIMULATION_LABEL
            return render(request, "audits/results/pending.html", context)
        found, self.form = self.request_analysis(request.GET)
        if isinstance(found, AnalysisState):
            results_url = self._results_url(self.form.parameters()) if self.links_back_to_results else ""
            return pending_page(request, self.audit, found, self.form.parameters(), results_url=results_url)
        self.setup_analysis(found)
        return super().get(request, *args, **kwargs)

    def request_analysis(self, query) -> tuple[AuditAnalysis | ReadyAnalysis | AnalysisState, AnalysisParametersForm]:
        return analysis_for_request(self.audit, query)

    def _results_url(self, parameters: AnalysisParameters) -> str:
        return f"{reverse('audits:results', args=[self.audit.pk])}?{urlencode(parameters_query(parameters))}"

    def setup_analysis(self, analysis: AuditAnalysis) -> None:
        self.analysis = analysis
        self.link = link_maker(self.audit, self.analysis.parameters)
        self.query = urlencode(parameters_query(self.analysis.parameters))
        self.methods = exports.analysis_methods(self.analysis)
        self.failed = self.methods["judge_failed_metrics"]

    def base_context(self) -> dict:
        return {
            "audit": self.audit,
            "analysis": self.analysis,
            "form": self.form,
            "methods": self.methods,
            "judge_failed_metrics": self.failed,
            "judge_failed_legend": exports.judge_failed_legend(self.failed),
            "simulation": self.audit.uses_simulation,
            "simulation_label": exports.SIMULATION_LABEL,
            "query": self.query,
            "results_url": self._results_url(self.analysis.parameters),
        }
