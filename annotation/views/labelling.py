"""Annotator pages for main labelling: the stages, the labelling page, revisions and an item's discussion.

The stages are those they may label; the labelling page shows one item at a time through the shared label form and its
keyboard script, with the annotator's recent items to go back to; a revision is of a submitted item, and a discussion
of an item they labelled.

Labelling is blind: the labelling page shows the item and the questions only. Other annotators' answers
appear on the discussion page only as the blindness rule (`workflow.blindness`) allows: in a discussion
stage, once every label of a disputed item is in and while its discussion is open, the disputed questions,
under pseudonyms. Anyone else is answered 404, as if there were no discussion.
"""

from __future__ import annotations

from django.contrib import messages
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views import View

from annotation.models import Item, Stage
from annotation.selectors.adjudication import (
    discussion_visibility_for,
    disputed_questions,
    item_side_by_side,
    main_item_of,
    my_open_discussions,
)
from annotation.selectors.projects import project_item
from annotation.selectors.revisions import assignment_to_revise, main_assignment_of, recent_items
from annotation.selectors.training import passed_enrollments
from annotation.services import adjudication as adjudication_services
from annotation.services.assignment import AssignmentBusy
from annotation.services.labelling import (
    NoAssignment,
    ReservationExpired,
    RevisionRefused,
    label_next,
    label_revise,
    labelling_progress,
    main_label_submit,
)
from annotation.services.resolution import ResolutionRefused
from annotation.workflow.answers import UNSURE_FIELD_VALUE, LabelInvalid
from annotation.workflow.training import StepRefused
from edufair_web.accounts.permissions import AnnotatorRequiredMixin
from edufair_web.converters import parse_id

from .common import answers_from_post, label_form_context, refused_response


class MyLabellingView(AnnotatorRequiredMixin, View):
    """Stages the annotator may label (gate passed), with progress, and discussions they are part of."""

    def get(self, request):
        rows = []
        for enrollment in passed_enrollments(request.user):
            progress = labelling_progress(annotator=request.user, stage=enrollment.stage)
            rows.append({"stage": enrollment.stage, "progress": progress})
        discussions = my_open_discussions(annotator=request.user)
        return render(request, "annotation/labelling/my_labelling.html", {"rows": rows, "discussions": discussions})


class LabelView(AnnotatorRequiredMixin, View):
    """One main item at a time: every question, number keys, u for Unsure, Enter submits."""

    template_name = "annotation/labelling/label.html"

    def _stage(self, stage_pk) -> Stage:
        return get_object_or_404(Stage.objects.select_related("project", "labelling"), pk=stage_pk)

    def _render(self, request, stage, assignment, errors=None, submitted=None, status=200):
        context = {
            "stage": stage,
            "assignment": assignment,
            "progress": labelling_progress(annotator=request.user, stage=stage),
            "recent": recent_items(annotator=request.user, stage=stage),
            **label_form_context(
                stage=stage,
                item=assignment.item,
                action=request.path,
                errors=errors,
                submitted=submitted,
                submit_label="Submit and next",
            ),
        }
        return render(request, self.template_name, context, status=status)

    def get(self, request, stage_pk):
        stage = self._stage(stage_pk)
        try:
            assignment = label_next(annotator=request.user, stage=stage)
        except StepRefused as exc:
            return refused_response(request, exc, stage)
        except AssignmentBusy as exc:
            return render(request, "annotation/labelling/busy.html", {"stage": stage, "reason": str(exc)}, status=503)
        if assignment is None:
            progress = labelling_progress(annotator=request.user, stage=stage)
            recent = recent_items(annotator=request.user, stage=stage)
            return render(
                request, "annotation/labelling/done.html", {"stage": stage, "progress": progress, "recent": recent}
            )
        return self._render(request, stage, assignment)

    def post(self, request, stage_pk):
        stage = self._stage(stage_pk)
        item = project_item(stage.project_id, parse_id(request.POST.get("item", "")))
        if item is None:
            return refused_response(request, StepRefused("That item is not part of this project."), stage)
        answers, seconds = answers_from_post(stage, request.POST)
        try:
            result = main_label_submit(annotator=request.user, stage=stage, item=item, answers=answers, seconds=seconds)
        except StepRefused as exc:
            return refused_response(request, exc, stage)
        except ReservationExpired as exc:
            messages.warning(request, str(exc))
            return redirect(request.path)
        except LabelInvalid as exc:
            assignment = main_assignment_of(stage=stage, item=item, annotator=request.user)
            if assignment is None:  # the reservation went to someone else meanwhile
                messages.warning(request, "This item is no longer reserved for you.")
                return redirect(request.path)
            return self._render(request, stage, assignment, errors=exc.errors, submitted=request.POST, status=400)
        if not result.created:
            messages.info(request, "That item was already submitted; nothing changed.")
        return redirect(request.path)


class ReviseView(AnnotatorRequiredMixin, View):
    """Go back to an item you submitted and change your answers while it can still be revised (the item
    not settled, its discussion not opened, within the stage's revision window). The earlier answers are
    kept as earlier versions; a refusal says why (409)."""

    template_name = "annotation/labelling/revise.html"

    def _objects(self, request, stage_pk, item_pk):
        stage = get_object_or_404(Stage.objects.select_related("project", "labelling"), pk=stage_pk)
        assignment = assignment_to_revise(annotator=request.user, stage=stage, item_id=item_pk)
        if assignment is None:
            raise Http404("You have not submitted this item in this stage.")
        return stage, assignment

    def _render(self, request, stage, assignment, *, errors=None, submitted=None, refusal="", status=200):
        row = next(
            (r for r in recent_items(annotator=request.user, stage=stage) if r["item"].pk == assignment.item_id), None
        )
        if submitted is None:
            submitted = {}
            for answer in row["answers"] if row else []:
                submitted[f"answer-{answer['question']}"] = UNSURE_FIELD_VALUE if answer["unsure"] else answer["value"]
                submitted[f"justification-{answer['question']}"] = answer["justification"]
        context = {
            "stage": stage,
            "assignment": assignment,
            "row": row,
            "refusal": refusal or (row["refusal"] if row else "Only your last submitted items can be revised."),
            **label_form_context(
                stage=stage,
                item=assignment.item,
                action=request.path,
                errors=errors,
                submitted=submitted,
                submit_label="Save my revised answer",
            ),
        }
        return render(request, self.template_name, context, status=status)

    def get(self, request, stage_pk, item_pk):
        stage, assignment = self._objects(request, stage_pk, item_pk)
        return self._render(request, stage, assignment)

    def post(self, request, stage_pk, item_pk):
        stage, assignment = self._objects(request, stage_pk, item_pk)
        answers, seconds = answers_from_post(stage, request.POST)
        try:
            result = label_revise(annotator=request.user, stage=stage, item=item_pk, answers=answers, seconds=seconds)
        except StepRefused as exc:
            return refused_response(request, exc, stage)
        except NoAssignment as exc:
            raise Http404(str(exc)) from exc
        except RevisionRefused as exc:
            return self._render(request, stage, assignment, submitted=request.POST, refusal=str(exc), status=409)
        except LabelInvalid as exc:
            return self._render(request, stage, assignment, errors=exc.errors, submitted=request.POST, status=400)
        if result.revised:
            messages.success(request, "Your answer is revised; the earlier one is kept in the item's history.")
        else:
            messages.info(request, "Nothing changed.")
        return redirect(reverse("annotation:label", args=[stage.pk]))


class DiscussionView(AnnotatorRequiredMixin, View):
    """An item's discussion: the annotators' answers and justifications on the disputed questions side by
    side (pseudonymised, "you" marked), comments, and the annotator's post-discussion answers."""

    template_name = "annotation/labelling/discussion.html"

    def _objects(self, request, stage_pk, item_pk):
        stage = get_object_or_404(Stage.objects.select_related("project"), pk=stage_pk)
        item = get_object_or_404(Item, pk=item_pk, project_id=stage.project_id)
        visibility = discussion_visibility_for(user=request.user, stage=stage, item=item)
        if visibility is None:
            raise Http404("No discussion of this item for you.")
        return stage, item, visibility

    def _render(self, request, stage, item, visibility, errors=None, submitted=None, status=200):
        detail = item_side_by_side(stage=stage, item=item, visibility=visibility)
        disputed = disputed_questions(stage, item)
        form = label_form_context(
            stage=stage,
            item=item,
            action=request.path,
            errors=errors,
            submitted=submitted,
            submit_label="Submit my answer after discussion",
        )
        form["label_questions"] = [q for q in form["label_questions"] if q["key"] in disputed]
        main_item = main_item_of(stage, item)
        context = {
            "stage": stage,
            "item": item,
            "detail": detail,
            "main_item": main_item,
            "can_comment": visibility.may_comment,
            "can_revise": visibility.may_revise and bool(disputed),
            **form,
        }
        return render(request, self.template_name, context, status=status)

    def get(self, request, stage_pk, item_pk):
        return self._render(request, *self._objects(request, stage_pk, item_pk))

    def post(self, request, stage_pk, item_pk):
        stage, item, visibility = self._objects(request, stage_pk, item_pk)
        try:
            if request.POST.get("comment", "").strip():
                adjudication_services.discussion_comment(
                    stage=stage, item=item, author=request.user, body=request.POST["comment"]
                )
                messages.success(request, "Comment posted.")
            else:
                answers, _ = answers_from_post(stage, request.POST)
                disputed = set(disputed_questions(stage, item))
                answers = {key: answer for key, answer in answers.items() if key in disputed}
                adjudication_services.discussion_answers_submit(
                    stage=stage, item=item, annotator=request.user, answers=answers
                )
                messages.success(request, "Your answer after discussion is saved (your first answer is kept too).")
        except ResolutionRefused as exc:
            messages.error(request, str(exc))
        except LabelInvalid as exc:
            return self._render(request, stage, item, visibility, errors=exc.errors, submitted=request.POST, status=400)
        if discussion_visibility_for(user=request.user, stage=stage, item=item) is None:
            messages.info(request, "The discussion of this item is closed.")
            return redirect("annotation:my-labelling")
        return redirect(reverse("annotation:discussion", args=[stage.pk, item.pk]))
