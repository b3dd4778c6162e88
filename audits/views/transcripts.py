"""The transcript viewer (researchers only): a dialogue's persona, turns with scores, end reason and model calls."""

from django.views.generic import DetailView

from audits.models import Dialogue
from audits.selectors.run_pages import dialogues_for_transcript
from audits.selectors.runs import dialogue_transcript
from edufair_web.accounts.permissions import ResearcherRequiredMixin


class DialogueDetailView(ResearcherRequiredMixin, DetailView):
    """The transcript viewer: persona, turns with the judge's scores, end reason, raw model calls."""

    model = Dialogue
    template_name = "audits/runs/dialogue_detail.html"
    context_object_name = "dialogue"

    def get_queryset(self):
        return dialogues_for_transcript()

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context.update(dialogue_transcript(dialogue=self.object))
        return context
