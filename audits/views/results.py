"""The results page of an audit (researchers only): what it found, heatmaps, tables, filters and methods.

What the audit found comes first (audits.findings, folded parameters and methods below it), then the paper's tables
as heatmaps, the conversation-level table and the methods box. The page links the judge-corrected page
(audits.views.judge_corrected) and names the metrics whose judge is cue-sensitive there.
"""

from __future__ import annotations

import hashlib
import zlib
from urllib.parse import urlencode

from django import forms
from django.core.cache import caches
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.functional import cached_property
from django.utils.safestring import mark_safe
from django.views.generic import TemplateView

from audits import exports, heatmap_figures
from audits.fairness import CHANGE_CI_METHOD
from audits.results_filter import RowFilter, choices
from audits.selectors.judge_validation import audit_judge_validation
from audits.selectors.results import audit_exclusion_counts_current
from audits.selectors.runs import audit_progress
from audits.services.analysis import AuditAnalysis, ReadyAnalysis, analysis_request_ready
from audits.services.judge_corrected import judge_corrected_available, judge_corrected_results
from audits.views.results_pages import (
    AnalysisParametersForm,
    ResultsPageMixin,
    link_maker,
    marked_changes,
    parameters_query,
    safe_figures,
)
from edufair_web.converters import parse_id

# The results page's parts rendered from the analysis, kept compressed in this process's memory (a new process,
# as after a deploy, renders them with its own templates and code).
RESULTS_PAGE_PARTS = {"top": "audits/results/_results_top.html", "rest": "audits/results/_results_rest.html"}
results_page_parts = caches["results_pages"]


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
        self.exclusions = audit_exclusion_counts_current(self.audit, ready.fingerprint)

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
