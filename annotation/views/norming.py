"""Norming threads: annotators of a stage (after their own pilot is in) and moderators discuss pilot items;
a moderator (adjudicator role) answers and pins clarifications for the next guideline version."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404, redirect, render
from django.views import View

from annotation.forms import CommentForm
from annotation.models import Comment, GoldLabel, Label, Thread
from annotation.selectors.training import training_progress
from annotation.services.training import SetupError, comment_pin, comment_post
from annotation.workflow.training import Action, StepRefused, check_action
from edufair_web.accounts.permissions import AdjudicatorRequiredMixin, AnnotatorRequiredMixin
from edufair_web.accounts.roles import ADJUDICATOR, RESEARCHER, has_role

from .common import refused_response


def is_moderator(user) -> bool:
    return has_role(user, ADJUDICATOR, RESEARCHER)


def thread_visible_or_refused(request, thread: Thread):
    """Moderators see every thread; an annotator only their stage's, and only after their own pilot."""
    if is_moderator(request.user):
        return None
    enrollment = thread.stage.enrollments.filter(user=request.user).first()
    if enrollment is None:
        raise PermissionDenied("You are not enrolled in this stage.")
    check_action(training_progress(enrollment), Action.NORMING)
    return enrollment


class ThreadView(AnnotatorRequiredMixin, View):
    def _context(self, request, thread, form=None):
        stage = thread.stage
        questions = list(stage.questions.all())
        gold = {g.question_id: g for g in GoldLabel.objects.filter(item=thread.item, question__in=questions)}
        # The viewer's own answers only: other annotators' labels are never shown to annotators.
        mine = {
            lab.question_id: lab
            for lab in Label.objects.filter(
                assignment__stage=stage, assignment__item=thread.item, assignment__annotator=request.user
            )
        }
        rows = []
        for question in questions:
            label = mine.get(question.id)
            rows.append(
                {
                    "prompt": question.prompt,
                    "gold": question.choice_label(gold[question.id].value) if question.id in gold else "—",
                    "rationale": gold[question.id].rationale if question.id in gold else "",
                    "mine": ("Unsure" if label.unsure else question.choice_label(label.value)) if label else "—",
                }
            )
        return {
            "thread": thread,
            "stage": stage,
            "rows": rows,
            "comments": thread.comments.select_related("author"),
            "form": form or CommentForm(),
            "is_moderator": is_moderator(request.user),
        }

    def get(self, request, pk):
        thread = get_object_or_404(Thread.objects.select_related("stage__project", "item"), pk=pk)
        try:
            thread_visible_or_refused(request, thread)
        except StepRefused as exc:
            return refused_response(request, exc, thread.stage)
        return render(request, "annotation/thread.html", self._context(request, thread))

    def post(self, request, pk):
        thread = get_object_or_404(Thread.objects.select_related("stage__project", "item"), pk=pk)
        form = CommentForm(request.POST)
        if not form.is_valid():
            return render(request, "annotation/thread.html", self._context(request, thread, form), status=400)
        try:
            comment_post(
                thread=thread, author=request.user, body=form.cleaned_data["body"], moderator=is_moderator(request.user)
            )
        except StepRefused as exc:
            return refused_response(request, exc, thread.stage)
        except SetupError as exc:
            messages.error(request, str(exc))
        return redirect("annotation:thread", pk)


class CommentPinView(AdjudicatorRequiredMixin, View):
    def post(self, request, pk):
        comment = get_object_or_404(Comment, pk=pk)
        comment_pin(comment=comment, pinned=request.POST.get("pinned", "1") == "1")
        messages.success(
            request, "Pinned: the next guideline version will carry it." if comment.pinned else "Unpinned."
        )
        return redirect("annotation:thread", comment.thread_id)


class ModerationView(AdjudicatorRequiredMixin, View):
    """Open norming threads across projects, the newest first."""

    def get(self, request):
        threads = (
            Thread.objects.filter(kind=Thread.Kind.NORMING, is_open=True)
            .select_related("stage__project", "item")
            .order_by("-created_at")[:200]
        )
        return render(request, "annotation/moderation.html", {"threads": threads})
