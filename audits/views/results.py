"""Results pages of an audit (researchers only): heatmaps, contrasts, pairs, methods, exports and the compare page.

The pages: what the audit found first (audits.findings, folded parameters and methods below it), the paper's tables
as heatmaps, a summary cell's contrast rows, a contrast's pairs with side-by-side transcripts, the conversation-level
table, the methods box, exports, the HTML report as a page, and the compare page (two audits or two tutors side by
side). The results page links the judge-corrected page (audits.views.judge_corrected) and names the metrics whose
judge is cue-sensitive there.

Every page reads one `AuditAnalysis` (audits.services.analysis) under the parameters of the GET form,
so the numbers match the API and the exports. The analysis is computed on a Celery worker: until it is done
a page shows its progress at once (polled with htmx, reloaded when done; a failure shows its error and a
retry button), and an export answers 202 with the progress and a Retry-After header. Metrics whose judge
failed validation are marked "†" in every table and figure, with the same legend line the HTML report has.
"""

from __future__ import annotations

import hashlib
import math
import zlib
from collections.abc import Collection, Sequence
from dataclasses import asdict, replace
from urllib.parse import urlencode

from django import forms
from django.core.cache import caches
from django.http import Http404, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.functional import cached_property
from django.utils.safestring import mark_safe
from django.views import View
from django.views.generic import TemplateView

from audits import exports, heatmap_figures
from audits.analysis_parameters import DoorParameter, door_parameters
from audits.change_plot import PlotRow, change_plot_svg
from audits.fairness import (
    CHANGE_CI_METHOD,
    CONVERSATION_METRICS,
    STUDENT_METRICS,
    TURN_METRICS,
    AnalysisParameters,
    contrast_pairs,
    r_ceiling,
    tutor_vs_backbone,
)
from audits.http_exports import analysis_state_response, export_response
from audits.judge_failed_marks import judge_failed_among, summary_cell_metrics
from audits.models import Audit, Question
from audits.results_filter import RowFilter, choices
from audits.run_outcome import FAILED
from audits.selectors.judge_validation import audit_judge_validation
from audits.selectors.results import (
    audit_analysis_inputs,
    audit_content_identities,
    audit_exclusion_counts,
    contrast_side_dialogues,
)
from audits.selectors.runs import audit_progress, audit_run_outcome
from audits.services.analysis import (
    AnalysisState,
    AuditAnalysis,
    ReadyAnalysis,
    analysis_parameters_from,
    analysis_request,
    analysis_request_ready,
    analysis_retry,
    analysis_state,
)
from audits.services.judge_corrected import judge_corrected_available, judge_corrected_results
from edufair_web.accounts.permissions import ResearcherRequiredMixin
from edufair_web.converters import parse_id

PARAMETER_FIELDS = tuple(parameter.name for parameter in door_parameters())

# The results page's parts rendered from the analysis, kept compressed in this process's memory (a new process,
# as after a deploy, renders them with its own templates and code).
RESULTS_PAGE_PARTS = {"top": "audits/results/_results_top.html", "rest": "audits/results/_results_rest.html"}
results_page_parts = caches["results_pages"]
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


class ResultsFilterForm(forms.Form):
    """What the page lists (GET): rows of one tutor, domain, dimension or metric, or violations only. The
    choices are the analysis's own values; the filter never changes what is computed or exported."""

    tutor = forms.TypedChoiceField(required=False, coerce=int, empty_value=None)
    domain = forms.ChoiceField(required=False)
    dimension = forms.ChoiceField(required=False)
    metric = forms.ChoiceField(required=False)
    violations = forms.BooleanField(required=False, label="Violations only")

    def __init__(self, query, *, rows: list[dict], tutor_choices: list[tuple[int, str]]):
        super().__init__({name: query.get(name) for name in self.base_fields if query.get(name) not in (None, "")})
        self.fields["tutor"].choices = [("", "all tutors"), *[(str(t), name) for t, name in tutor_choices]]
        for name, everyone in (("domain", "all domains"), ("dimension", "all dimensions"), ("metric", "all metrics")):
            self.fields[name].choices = [("", everyone), *[(value, value) for value in choices(rows, name)]]

    def row_filter(self) -> RowFilter:
        if not self.is_valid():
            return RowFilter()
        data = self.cleaned_data
        return RowFilter(
            tutor=data["tutor"],
            domain=data["domain"],
            dimension=data["dimension"],
            metric=data["metric"],
            violations_only=data["violations"],
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


def _int_or_404(value) -> int:
    found = parse_id(value or "")
    if found is None:
        raise Http404("bad parameter")
    return found


class ResultsPageMixin(ResearcherRequiredMixin):
    links_back_to_results = True  # the progress state of a cell or pairs page links to the results page

    def get(self, request, *args, **kwargs):
        self.audit = get_object_or_404(
            Audit.objects.select_related("judge_endpoint", "judge_template"), pk=kwargs["pk"]
        )
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


class AuditResultsView(ResultsPageMixin, TemplateView):
    """The results page. What it renders from the analysis (figures, tables, findings, methods: nearly all of
    it, megabytes at a thousand dialogues) is kept per process by everything it is a function of (`_parts_key`),
    so a page seen before reads the analysis's row and a few counts and renders only its live parts: the audit's
    progress and the judge-corrected note."""

    template_name = "audits/results/results.html"
    links_back_to_results = False

    def request_analysis(self, query):
        form = AnalysisParametersForm.from_query(query)
        return analysis_request_ready(audit=self.audit, parameters=form.parameters()), form

    def setup_analysis(self, ready: ReadyAnalysis) -> None:
        self.ready = ready
        self.link = link_maker(self.audit, ready.parameters)
        self.query = urlencode(parameters_query(ready.parameters))
        self.exclusions = audit_exclusion_counts(self.audit)

    @cached_property
    def analysis(self) -> AuditAnalysis:
        return self.ready.load(exclusion_counts=self.exclusions)

    @cached_property
    def methods(self) -> dict:
        return exports.analysis_methods(self.analysis)

    @cached_property
    def failed(self) -> list[str]:
        return self.methods["judge_failed_metrics"]

    def _parts_key(self) -> str:
        """Everything the analysis's parts of the page are a function of besides the code: the analysis, the
        query (parameters, filter, backbone), what stands behind each cell, the judge's validation, and the
        audit's own words."""
        audit = self.audit
        facts = (
            self.ready.key,
            sorted(self.request.GET.lists()),
            sorted((key, sorted(counts.items())) for key, counts in self.exclusions.dialogues.items()),
            sorted((key, sorted(counts.items())) for key, counts in self.exclusions.turns.items()),
            audit_judge_validation(audit),
            audit.name,
            audit.status,
            str(audit.judge_endpoint),
            str(audit.judge_template),
            audit.judge_template.version,
        )
        return "results-page:" + hashlib.sha256(repr(facts).encode()).hexdigest()

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context.update(
            {
                "audit": self.audit,
                "simulation": self.audit.uses_simulation,
                "simulation_label": exports.SIMULATION_LABEL,
                "query": self.query,
                "progress": audit_progress(audit=self.audit),
                "judge_corrected_url": self._judge_corrected_url(),
            }
        )
        # Without a judge-validation project the note says so, and the analysis need not be read for it.
        context["judge_corrected"] = (
            judge_corrected_results(self.audit, analysis=self.analysis)
            if judge_corrected_available(self.audit)
            else None
        )
        key = self._parts_key()
        kept = results_page_parts.get(key)
        if kept is None:
            parts = self._parts_context()
            kept = {
                name: zlib.compress(render_to_string(template, parts, request=self.request).encode(), 1)
                for name, template in RESULTS_PAGE_PARTS.items()
            }
            results_page_parts.set(key, kept)
        # Rendered from the analysis by the templates, every text in them escaped there.
        context["fragments"] = {name: mark_safe(zlib.decompress(html).decode()) for name, html in kept.items()}  # noqa: S308
        return context

    def _parts_context(self) -> dict:
        """What the analysis's parts of the page render (_results_top.html, _results_rest.html)."""
        context = self.base_context()
        analysis = self.analysis
        failed = self.failed
        tables = exports.export_tables(analysis, include_raw=False, failed=failed)
        tutor_choices = [(t, analysis.tutor_name(t)) for t in analysis.tutors]
        figures = {
            "dimension_figures": heatmap_figures.dimension_figures(analysis, self.link, failed_metrics=failed),
            "metric_figures": heatmap_figures.metric_figures(analysis, self.link, failed_metrics=failed),
            "implicit_figures": heatmap_figures.implicit_figures(analysis, self.link, failed_metrics=failed),
            "opposite_figures": heatmap_figures.opposite_figures(analysis, self.link, failed_metrics=failed),
            "within_figures": heatmap_figures.contrast_figures(analysis, self.link, failed_metrics=failed),
            "control_figures": heatmap_figures.contrast_figures(
                analysis, self.link, family="vs_control", failed_metrics=failed
            ),
            "implicit_contrast_figures": heatmap_figures.contrast_figures(
                analysis, self.link, kind="implicit", family="names", failed_metrics=failed
            ),
            "opposite_contrast_figures": heatmap_figures.contrast_figures(
                analysis, self.link, kind="opposite", family="opposite", failed_metrics=failed
            ),
        }
        every_row = tables["contrasts"] + tables["conversation_contrasts"] + tables["student_contrasts"]
        filter_form = ResultsFilterForm(self.request.GET, rows=every_row, tutor_choices=tutor_choices)
        shown = filter_form.row_filter()
        context.update(
            {
                "counts": tables["cells_over_threshold"],
                "findings": exports.analysis_findings(analysis, tables),
                **{name: safe_figures(found) for name, found in figures.items()},
                "filter_form": filter_form,
                "filter_active": shown.active,
                "conversation_rows": self._rows_with_links(shown.apply(tables["conversation_contrasts"])),
                "conversation_total": len(tables["conversation_contrasts"]),
                "student_rows": shown.apply(tables["student_contrasts"]),
                "student_total": len(tables["student_contrasts"]),
                "exclusion_rows": self._rows_with_links(shown.apply(exports.exclusion_rows(tables))),
                "violations": self._rows_with_links(shown.apply(r for r in tables["contrasts"] if r["violation"])),
                "tutor_choices": tutor_choices,
                "backbone": self._backbone(tutor_choices),
                "change_ci_method": CHANGE_CI_METHOD,
                "tables": exports.TABLES,
            }
        )
        return context

    def _judge_corrected_url(self) -> str:
        return f"{reverse('audits:results-judge-corrected', args=[self.audit.pk])}?{self.query}"

    def _rows_with_links(self, rows: list[dict]) -> list[dict]:
        keys = ("tutor", "domain", "kind", "family", "dimension", "level_a", "level_b", "metric")
        return [{**row, "href": self.link("pairs", **{k: row[k] for k in keys})} for row in rows]

    def _backbone(self, tutor_choices) -> dict | None:
        """Tutor vs backbone: pick two tutors (GET tutor, backbone); per summary cell both values and the change."""
        if len(tutor_choices) < 2:
            return None
        ids = [t for t, _ in tutor_choices]
        tutor = parse_id(self.request.GET.get("tutor", "")) or ids[1]
        backbone = parse_id(self.request.GET.get("backbone", "")) or ids[0]
        if tutor not in ids or backbone not in ids:
            tutor, backbone = ids[1], ids[0]
        changes = self.analysis.tutor_vs_backbone(tutor=tutor, backbone=backbone)
        marked = marked_changes(changes, self.failed, self.analysis.pedagogical.metrics)
        return {"tutor": tutor, "backbone": backbone, "changes": marked}


class ResultsCellView(ResultsPageMixin, TemplateView):
    """The contrast rows one summary cell averages, each linking to its pairs."""

    template_name = "audits/results/cell.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context.update(self.base_context())
        get = self.request.GET
        tutor = _int_or_404(get.get("tutor"))
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


class ContrastPairsView(ResultsPageMixin, TemplateView):
    """One contrast cell: its statistics, its question pairs, and the transcripts of one question under
    level A and level B side by side with the judge's scores per turn."""

    template_name = "audits/results/pairs.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context.update(self.base_context())
        get = self.request.GET
        tutor = _int_or_404(get.get("tutor"))
        cell = {k: get.get(k, "") for k in ("domain", "kind", "family", "dimension", "level_a", "level_b", "metric")}
        contrast = self.analysis.contrast(
            (cell["kind"], cell["family"], cell["dimension"], cell["level_a"], cell["level_b"])
        )
        table = self.analysis.table_for(cell["metric"])
        rows = table.where(tutor=tutor, **cell)
        if contrast is None or not rows:
            raise Http404("no such contrast cell")
        row = rows[0]
        inputs = audit_analysis_inputs(self.audit)
        metrics = next(
            table for table in (TURN_METRICS, CONVERSATION_METRICS, STUDENT_METRICS) if cell["metric"] in table
        )
        questions, a, b = contrast_pairs(
            inputs.scores,
            inputs.design,
            tutor=tutor,
            domain=cell["domain"],
            contrast=contrast,
            metric=cell["metric"],
            metrics=metrics,
            question_keys=audit_content_identities(self.audit)[1],
        )
        texts = dict(Question.objects.filter(pk__in=questions.tolist()).values_list("pk", "text"))
        parameters = self.analysis.parameters
        ceiling = (
            r_ceiling(
                b - a,
                zero_method=parameters.zero_method,
                r_denominator=parameters.r_denominator,
                round_decimals=parameters.round_decimals,
            )
            if parameters.effect == "r"
            else None
        )
        pairs = []
        for question, value_a, value_b in zip(questions.tolist(), a.tolist(), b.tolist(), strict=True):
            complete = not (math.isnan(value_a) or math.isnan(value_b))
            pairs.append(
                {
                    "question": question,
                    "text": texts.get(question, ""),
                    "a": value_a,
                    "b": value_b,
                    "difference": value_b - value_a if complete else math.nan,
                    "complete": complete,
                    "href": f"{self.request.path}?{urlencode({**get.dict(), 'question': question})}#side-by-side",
                }
            )
        pairs.sort(key=lambda p: (not p["complete"], -abs(p["difference"]) if p["complete"] else 0, p["question"]))
        selected = get.get("question")
        chosen = next((p for p in pairs if str(p["question"]) == selected), None)
        if chosen is None:
            chosen = next((p for p in pairs if p["complete"]), pairs[0] if pairs else None)
        side_a = side_b = []
        if chosen is not None:
            side_a, side_b = contrast_side_dialogues(
                audit=self.audit, tutor_id=tutor, question_id=chosen["question"], contrast=contrast
            )
            chosen = {**chosen, "question_obj": Question.objects.filter(pk=chosen["question"]).first()}
        context.update(
            {
                "row": row,
                "title": heatmap_figures.row_title(row),
                "tutor_name": self.analysis.tutor_name(tutor),
                "cell": cell,
                "pairs": pairs,
                "n_complete": sum(p["complete"] for p in pairs),
                "chosen": chosen,
                "side_a": side_a,
                "side_b": side_b,
                "metric_is_turn_level": cell["metric"] in TURN_METRICS,
                "r_ceiling": ceiling,
            }
        )
        return context


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


class ResultsExportView(ResearcherRequiredMixin, View):
    """Download: ?format=csv&table=<name> | parquet&table=<name> | methods (the CSVs' sidecar) | json | html, under the
    page's parameters (202 while computing)."""

    def get(self, request, pk: int):
        audit = get_object_or_404(Audit, pk=pk)
        analysis, _ = analysis_for_request(audit, request.GET)
        if isinstance(analysis, AnalysisState):
            return analysis_state_response(analysis)
        return export_response(analysis, request.GET.get("format", "csv"), request.GET.get("table", "contrasts"))


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


def _change_plot(changes) -> str:
    rows = [PlotRow(f"{c.domain} · {c.kind} · {c.group}", c.change, c.change_ci_low, c.change_ci_high) for c in changes]
    svg = change_plot_svg(rows, caption="Change (right − left) per summary cell with its approximate 95% CI")
    return mark_safe(svg)  # noqa: S308 - built by audits.change_plot, every text escaped


class CompareView(ResearcherRequiredMixin, TemplateView):
    """Two (audit, tutor) pairs side by side: every summary cell's value in each, and the change."""

    template_name = "audits/results/compare.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        get = self.request.GET
        form = AnalysisParametersForm.from_query(get)
        parameters = form.parameters()
        audits = list(Audit.objects.order_by("-created_at", "-id").prefetch_related("tutors"))
        choices = [
            {"value": f"{audit.pk}:{tutor.pk}", "label": f"#{audit.pk} {audit.name} — {tutor.name}"}
            for audit in audits
            for tutor in audit.tutors.all()
        ]
        context.update({"form": form, "choices": choices, "left": get.get("left", ""), "right": get.get("right", "")})
        sides = [self._side(get.get(key), parameters) for key in ("left", "right")]
        pending: dict[int, dict] = {}  # per audit: both sides may be the same audit
        for audit, found, _ in (side for side in sides if side):
            if isinstance(found, AnalysisState):
                pending.setdefault(
                    audit.pk,
                    {**progress_context(audit, found, parameters), "compare_label": f"#{audit.pk} {audit.name}"},
                )
        context["pending"] = list(pending.values())
        if all(sides) and not pending:
            (_, left_analysis, left_tutor), (_, right_analysis, right_tutor) = sides
            cells = [replace(c, tutor="left") for c in left_analysis.summary_cells() if c.tutor == left_tutor]
            cells += [replace(c, tutor="right") for c in right_analysis.summary_cells() if c.tutor == right_tutor]
            left_methods = exports.analysis_methods(left_analysis)
            right_methods = exports.analysis_methods(right_analysis)
            # A change rests on both audits' judges: a metric that failed on either side is marked.
            failed = list(dict.fromkeys(left_methods["judge_failed_metrics"] + right_methods["judge_failed_metrics"]))
            changes = tutor_vs_backbone(cells, tutor="right", backbone="left", confidence=parameters.confidence)
            metrics = list(dict.fromkeys([*left_analysis.pedagogical.metrics, *right_analysis.pedagogical.metrics]))
            context.update(
                {
                    "left_analysis": left_analysis,
                    "right_analysis": right_analysis,
                    "left_name": f"#{left_analysis.audit.pk} {left_analysis.tutor_name(left_tutor)}",
                    "right_name": f"#{right_analysis.audit.pk} {right_analysis.tutor_name(right_tutor)}",
                    "changes": marked_changes(changes, failed, metrics),
                    "flag_changes": exports.compare_flag_changes(
                        left_analysis, left_tutor, right_analysis, right_tutor, failed
                    ),
                    "change_plot": _change_plot(changes),
                    "change_ci_method": CHANGE_CI_METHOD,
                    "judge_failed_metrics": failed,
                    "judge_failed_legend": exports.judge_failed_legend(failed),
                    "simulation": left_analysis.audit.uses_simulation or right_analysis.audit.uses_simulation,
                    "simulation_label": exports.SIMULATION_LABEL,
                    "left_methods": left_methods,
                    "right_methods": right_methods,
                }
            )
        return context

    @staticmethod
    def _side(value: str | None, parameters: AnalysisParameters):
        if not value or ":" not in value:
            return None
        audit_id, tutor = (parse_id(part) for part in value.split(":", 1))
        audit = Audit.objects.filter(pk=audit_id).first() if audit_id is not None else None
        if audit is None or tutor is None:
            return None
        return audit, analysis_request(audit=audit, parameters=parameters), tutor
