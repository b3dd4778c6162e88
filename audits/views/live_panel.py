"""The run page's live panel (researchers only): controls, progress and the page of dialogues, polled by htmx."""

from django.core.paginator import Paginator
from django.http import HttpResponseBadRequest
from django.shortcuts import get_object_or_404, render
from django.views import View

from audits.models import Audit, Dialogue
from audits.selectors.run_pages import dialogues_listed
from audits.selectors.runs import audit_progress
from edufair_web.accounts.permissions import ResearcherRequiredMixin
from edufair_web.api_parameters import choice_refusal


def status_filter_refusal(request) -> str | None:
    """Why the run page's ?status= cannot filter (a 400, as the API's ?status= is), or None: a misspelt status would
    otherwise show an empty table, which reads as "no such dialogues"."""
    refusal = choice_refusal(request.GET, "status", Dialogue.Status.values)
    return f"status: {refusal}" if refusal else None


def live_context(request, audit: Audit) -> dict:
    """The run page's live panel: controls, progress, outcome, failures and the page of dialogues
    (filtered by ?status=, paged by ?page=), all from rows."""
    wanted = request.GET.get("status")
    dialogues = dialogues_listed(audit_id=audit.pk, status=wanted)
    progress = audit_progress(audit=audit)
    paginator = Paginator(dialogues, 50)
    paginator.count = progress[wanted] if wanted else progress["total"]  # the tally's count: no COUNT of the rows
    return {"audit": audit, "progress": progress, "page": paginator.get_page(request.GET.get("page"))}


class AuditProgressView(ResearcherRequiredMixin, View):
    """The live panel (htmx polls it while the audit runs), controls and dialogue table included."""

    def get(self, request, pk):
        audit = get_object_or_404(Audit, pk=pk)
        refusal = status_filter_refusal(request)
        if refusal:
            return HttpResponseBadRequest(refusal)
        return render(request, "audits/runs/_progress.html", live_context(request, audit))
