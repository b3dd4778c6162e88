"""Adjudicator pages: the queue, and one item's answers side by side with its decision form.

The queue holds the items waiting for a discussion to end or for a reviewer; an item's page shows every annotator's
answers and justifications side by side, its discussion, and a keyboard-driven decision form (the label form's script:
number keys choose, Enter decides)."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpResponseBadRequest
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views import View

from annotation.models import AnnotationProject, Item, Stage
from annotation.selectors.adjudication import (
    QUEUE_STATUSES,
    adjudication_queue,
    discussion_visibility_for,
    disputed_questions,
    item_side_by_side,
    main_item_of,
    next_queued_item,
)
from annotation.selectors.label_form import label_form_questions
from annotation.services import adjudication as adjudication_services
from annotation.services.resolution import ResolutionRefused
from edufair_web.accounts.permissions import AdjudicatorRequiredMixin
from edufair_web.converters import parse_id


class QueueView(AdjudicatorRequiredMixin, View):
    """The queue, optionally of one project or one stage (?project=, ?stage=: 400 for a malformed id)."""

    def get(self, request):
        filters = {}
        for name, model in (("project", AnnotationProject), ("stage", Stage)):
            raw = request.GET.get(name, "")
            if raw == "":
                continue
            found = parse_id(raw)
            if found is None:
                return HttpResponseBadRequest(f"{name}: expected an id (a whole number of at most 18 digits).")
            filters[name] = get_object_or_404(model, pk=found)
        rows = list(adjudication_queue(**filters))
        return render(request, "annotation/adjudication/queue.html", {"rows": rows, "filters": filters})


class ItemView(AdjudicatorRequiredMixin, View):
    template_name = "annotation/adjudication/item.html"

    def _objects(self, stage_pk, item_pk):
        stage = get_object_or_404(Stage.objects.select_related("project"), pk=stage_pk)
        item = get_object_or_404(Item, pk=item_pk, project_id=stage.project_id)
        return stage, item

    def _render(self, request, stage, item, error="", status=200):
        visibility = discussion_visibility_for(user=request.user, stage=stage, item=item)  # a moderator's: all
        detail = item_side_by_side(stage=stage, item=item, visibility=visibility)
        main_item = main_item_of(stage, item)
        open_keys = disputed_questions(stage, item)
        questions = [q for q in label_form_questions(stage) if q["key"] in open_keys]
        for question in questions:
            question["allow_unsure"] = False  # a reviewer decides on a value, never Unsure
        context = {
            "stage": stage,
            "item": item,
            "detail": detail,
            "main_item": main_item,
            "decide_questions": questions,
            "can_decide": main_item is not None and main_item.status in QUEUE_STATUSES,
            "error": error,
        }
        return render(request, self.template_name, context, status=status)

    def get(self, request, stage_pk, item_pk):
        stage, item = self._objects(stage_pk, item_pk)
        return self._render(request, stage, item)

    def post(self, request, stage_pk, item_pk):
        stage, item = self._objects(stage_pk, item_pk)
        try:
            if request.POST.get("action") == "close":
                adjudication_services.discussion_close(stage=stage, item=item)
                messages.success(request, "Discussion closed; what it settled is recorded.")
                return redirect(reverse("annotation:adjudicate-item", args=[stage.pk, item.pk]))
            decisions = {key: request.POST.get(f"answer-{key}", "").strip() for key in disputed_questions(stage, item)}
            adjudication_services.adjudication_decide(
                stage=stage, item=item, decisions=decisions, note=request.POST.get("note", ""), by=request.user
            )
        except ResolutionRefused as exc:
            return self._render(request, stage, item, error=str(exc), status=400)
        messages.success(request, f"Item {item.external_id} resolved.")
        next_row = next_queued_item()
        if next_row is not None:
            return redirect(reverse("annotation:adjudicate-item", args=[next_row.stage_id, next_row.item_id]))
        return redirect("annotation:adjudicate")
