"""The compare page (researchers only): two (audit, tutor) pairs side by side, each summary cell and the change."""

from __future__ import annotations

from dataclasses import replace

from django.utils.safestring import mark_safe
from django.views.generic import TemplateView

from audits import exports
from audits.change_plot import PlotRow, change_plot_svg
from audits.fairness import CHANGE_CI_METHOD, AnalysisParameters, tutor_vs_backbone
from audits.selectors.results_pages import audit_or_none, audit_tutor_pairs
from audits.services.analysis import AnalysisState, analysis_request
from audits.views.results_pages import AnalysisParametersForm, marked_changes, progress_context
from edufair_web.accounts.permissions import ResearcherRequiredMixin
from edufair_web.converters import parse_id


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
        choices = [
            {"value": f"{audit.pk}:{tutor.pk}", "label": f"#{audit.pk} {audit.name} — {tutor.name}"}
            for audit, tutor in audit_tutor_pairs()
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
        audit = audit_or_none(audit_id)
        if audit is None or tutor is None:
            return None
        return audit, analysis_request(audit=audit, parameters=parameters), tutor
