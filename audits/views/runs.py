"""Audit pages (researchers only): the list of audits, an audit's run page and its controls."""

from django.contrib import messages
from django.http import HttpResponseBadRequest, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.urls import reverse
from django.views import View
from django.views.generic import DetailView, ListView

from audits.design_launch import selection_text
from audits.models import Audit
from audits.run_outcome import LABELS as OUTCOME_LABELS
from audits.run_outcome import TONES, run_outcome
from audits.selectors.endpoints import audit_reported_models
from audits.selectors.run_pages import audit_conditions, audit_tutors
from audits.selectors.runs import audit_list, audit_requests_sent
from audits.services.audit_lifecycle import audit_cancel, audit_launch, audit_pause, audit_resume, audit_retry_failed
from audits.services.judging import audit_turns_rejudge
from audits.views.clone import CloneForm
from audits.views.live_panel import live_context, status_filter_refusal
from edufair_web.accounts.permissions import ResearcherRequiredMixin


class AuditListView(ResearcherRequiredMixin, ListView):
    template_name = "audits/runs/audit_list.html"
    context_object_name = "audits"
    paginate_by = 50

    def get_queryset(self):
        return audit_list(user=self.request.user)

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        for audit in context["audits"]:  # how each run ended, as the run page says it (audits.run_outcome)
            outcome = run_outcome(audit.status, done=audit.n_done, failed=audit.n_failed)
            audit.outcome_label, audit.outcome_tone = OUTCOME_LABELS.get(outcome, outcome), TONES.get(outcome, "")
        return context


class AuditDetailView(ResearcherRequiredMixin, DetailView):
    model = Audit
    template_name = "audits/runs/audit_detail.html"
    context_object_name = "audit"

    def get(self, request, *args, **kwargs):
        refusal = status_filter_refusal(request)
        if refusal:
            return HttpResponseBadRequest(refusal)
        return super().get(request, *args, **kwargs)

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        audit = self.object
        context.update(live_context(self.request, audit))
        context["clone_form"] = CloneForm.for_audit(self.object)
        context["conditions"] = audit_conditions(audit=audit)
        context["tutors"] = audit_tutors(audit=audit)
        context["reported_models"] = audit_reported_models(audit=audit)
        context["requests_sent"] = audit_requests_sent(audit=audit)
        context["selection_text"] = selection_text(audit.question_selection)
        return context


class AuditActionView(ResearcherRequiredMixin, View):
    ACTIONS = {
        "launch": audit_launch,
        "pause": audit_pause,
        "resume": audit_resume,
        "cancel": audit_cancel,
        "retry-failed": audit_retry_failed,
        "rejudge": audit_turns_rejudge,
    }
    DONE = {"rejudge": "Re-judging {result} unparsable and failed turns on the workers."}

    def post(self, request, pk, action):
        audit = get_object_or_404(Audit, pk=pk)
        change = self.ACTIONS.get(action)
        if change is None:
            messages.error(request, f"Unknown action {action!r}.")
        else:
            try:
                result = change(audit=audit)
                done = self.DONE.get(action, f"{action.replace('-', ' ').capitalize()}: done.")
                messages.success(request, done.format(result=result))
            except ValueError as exc:
                messages.error(request, str(exc))
        return HttpResponseRedirect(reverse("audits:audit-detail", args=[pk]))
