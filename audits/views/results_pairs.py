"""A contrast cell (researchers only): its statistics, its question pairs and two transcripts side by side."""

from __future__ import annotations

import math
from urllib.parse import urlencode

from django.http import Http404
from django.views.generic import TemplateView

from audits import heatmap_figures
from audits.fairness import r_ceiling
from audits.selectors.questionbank import question_or_none, question_texts
from audits.selectors.results import audit_cell_pairs, contrast_side_dialogues
from audits.views.results_pages import ResultsPageMixin, int_or_404


class ContrastPairsView(ResultsPageMixin, TemplateView):
    """One contrast cell: its statistics, its question pairs, and the transcripts of one question under
    level A and level B side by side with the judge's scores per turn."""

    template_name = "audits/results/pairs.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context.update(self.base_context())
        get = self.request.GET
        tutor = int_or_404(get.get("tutor"))
        cell = {k: get.get(k, "") for k in ("domain", "kind", "family", "dimension", "level_a", "level_b", "metric")}
        contrast = self.analysis.contrast(
            (cell["kind"], cell["family"], cell["dimension"], cell["level_a"], cell["level_b"])
        )
        table = self.analysis.table_for(cell["metric"])
        rows = table.where(tutor=tutor, **cell)
        if contrast is None or not rows:
            raise Http404("no such contrast cell")
        row = rows[0]
        metrics = table.metrics
        questions, a, b = audit_cell_pairs(
            self.audit, tutor=tutor, domain=cell["domain"], contrast=contrast, metric=cell["metric"], metrics=metrics
        )
        texts = question_texts(questions.tolist())
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
            chosen = {**chosen, "question_obj": question_or_none(chosen["question"])}
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
                "metric_is_turn_level": cell["metric"] in self.analysis.pedagogical.metrics,
                "r_ceiling": ceiling,
            }
        )
        return context
