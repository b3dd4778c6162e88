"""Norming thread pages, where annotators and moderators discuss pilot items.

The annotators are those of a stage, after their own pilot is in; a moderator (adjudicator role) answers and pins
clarifications for the next guideline version.

The thread page serves norming threads to the annotators of their stage and nothing else: an item's
discussion (an adjudication thread) opens only as the blindness rule allows, on the discussion page; any
other thread is answered 404, as if it did not exist (thread ids are sequential)."""

from __future__ import annotations

from django.contrib import messages
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views import View

from annotation.forms import CommentForm
from annotation.models import Comment, Thread
from annotation.selectors.threads import ThreadHidden, norming_thread_rows, thread_access, thread_comments
from annotation.selectors.training import open_norming_threads
from annotation.services.training import SetupError, comment_pin, comment_post
from annotation.workflow.training import StepRefused
from edufair_web.accounts.permissions import AdjudicatorRequiredMixin, AnnotatorRequiredMixin

from .common import refused_response


def _discussion_url(access) -> str:
    thread = access.thread
    name = "annotation:adjudicate-item" if access.moderator else "annotation:discussion"
    return reverse(name, args=[thread.stage_id, thread.item_id])


class ThreadView(AnnotatorRequiredMixin, View):
    """A norming thread: the item, gold beside the viewer's own pilot answer, comments (authors named as
    `selectors.threads` says), and the comment form."""

    def _access(self, request, pk):
        """The thread and the viewer's access; 404 for a thread they may not know of. The access is a
        StepRefused (answered 403) for a norming thread of their stage before their pilot is in."""
        thread = get_object_or_404(Thread.objects.select_related("stage__project", "item"), pk=pk)
        try:
            return thread, thread_access(user=request.user, thread=thread)
        except ThreadHidden as exc:
            raise Http404(str(exc)) from exc
        except StepRefused as exc:
            return thread, exc

    def _context(self, request, access, form=None):
        return {
            "thread": access.thread,
            "stage": access.thread.stage,
            "rows": norming_thread_rows(access=access, user=request.user),
            "comments": thread_comments(access=access, user=request.user),
            "form": form or CommentForm(),
            "is_moderator": access.moderator,
        }

    def get(self, request, pk):
        thread, access = self._access(request, pk)
        if isinstance(access, StepRefused):
            return refused_response(request, access, thread.stage)
        if access.discussion is not None:  # an item's discussion lives on its own page
            return redirect(_discussion_url(access))
        return render(request, "annotation/thread.html", self._context(request, access))

    def post(self, request, pk):
        thread, access = self._access(request, pk)
        if isinstance(access, StepRefused):
            return refused_response(request, access, thread.stage)
        if access.discussion is not None:
            return redirect(_discussion_url(access))  # comments on a discussion are posted there
        form = CommentForm(request.POST)
        if not form.is_valid():
            return render(request, "annotation/thread.html", self._context(request, access, form), status=400)
        try:
            comment_post(
                thread=access.thread, author=request.user, body=form.cleaned_data["body"], moderator=access.moderator
            )
        except StepRefused as exc:
            return refused_response(request, exc, access.thread.stage)
        except SetupError as exc:
            messages.error(request, str(exc))
        return redirect("annotation:thread", pk)


class CommentPinView(AdjudicatorRequiredMixin, View):
    def post(self, request, pk):
        comment = get_object_or_404(Comment.objects.select_related("thread__stage__project"), pk=pk)
        try:
            comment_pin(comment=comment, pinned=request.POST.get("pinned", "1") == "1")
        except SetupError as exc:
            messages.error(request, str(exc))
            return redirect("annotation:thread", comment.thread_id)
        messages.success(
            request, "Pinned: the next guideline version will carry it." if comment.pinned else "Unpinned."
        )
        return redirect("annotation:thread", comment.thread_id)


class ModerationView(AdjudicatorRequiredMixin, View):
    """Open norming threads across projects, the newest first."""

    def get(self, request):
        threads = open_norming_threads()
        return render(request, "annotation/moderation.html", {"threads": threads})
