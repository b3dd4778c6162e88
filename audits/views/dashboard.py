"""The researchers' dashboard at /audits/: every audit with its status, progress and latest results.

The latest results come from the cache — the dashboard never starts an analysis — and the dashboard offers the ways to
launch a new audit."""

from django.urls import reverse
from django.views.generic import TemplateView

from audits.exports import contrast_findings
from audits.models import Audit
from audits.run_outcome import LABELS, TONES, run_outcome
from audits.selectors.run_pages import dashboard_audits
from audits.services.analysis import analysis_current
from edufair_web.accounts.permissions import ResearcherRequiredMixin

DASHBOARD_AUDITS = 50


class DashboardView(ResearcherRequiredMixin, TemplateView):
    template_name = "audits/dashboard.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        audits = dashboard_audits(limit=DASHBOARD_AUDITS)
        rows = []
        for audit in audits:
            total, done = audit.n_dialogues, audit.n_done
            outcome = run_outcome(audit.status, done=done, failed=audit.n_failed)
            rows.append(
                {
                    "audit": audit,
                    "outcome": LABELS.get(outcome, outcome),
                    "outcome_tone": TONES.get(outcome, ""),
                    "total": total,
                    "done": done,
                    "percent": int(100 * done / total) if total else 0,
                    "tutors": audit.tutor_names,
                    "results_url": reverse("audits:results", args=[audit.pk]) if done else "",
                }
            )
        # The latest audit with results: one whose every dialogue failed has none to show.
        latest = next((a for a in audits if a.status == Audit.Status.FINISHED and a.n_done), None)
        context.update({"rows": rows, "latest": latest, "latest_results": self._latest_results(latest)})
        return context

    @staticmethod
    def _latest_results(audit: Audit | None) -> dict | None:
        analysis = analysis_current(audit=audit) if audit is not None else None
        if analysis is None:
            return None
        violations = sorted((row for row in analysis.pedagogical.rows if row.violation), key=lambda row: -abs(row.r))
        return {
            "analysis": analysis,
            "findings": contrast_findings(analysis)["tutors"],
            "violations": [{"row": row, "tutor_name": analysis.tutor_name(row.tutor)} for row in violations[:8]],
            "n_violations": len(violations),
        }
