"""Researcher page: import a Label Studio project export (tasks with annotations) into a project."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect, render
from django.views import View

from annotation.label_studio.importing import LabelStudioImportFailed, label_studio_import
from annotation.models import AnnotationProject
from edufair_web.accounts.permissions import ResearcherRequiredMixin
from edufair_web.upload_limits import MaxUploadSize


class LabelStudioImportForm(forms.Form):
    file = forms.FileField(
        validators=[MaxUploadSize("items")], help_text="Label Studio's JSON export of a project (Export → JSON)."
    )
    stage = forms.IntegerField(
        required=False, min_value=1, help_text="Stage for annotations that do not name one (default: the first)."
    )
    accept_revisions = forms.BooleanField(
        required=False,
        label="Accept revisions",
        help_text="Keep a label changed in Label Studio as a revision beside the original (otherwise its task is "
        "refused and the rest imported).",
    )
    instance = forms.CharField(
        required=False,
        max_length=100,
        label="Label Studio instance",
        help_text="A name for the Label Studio the file comes from (e.g. its address), when the project takes exports "
        "of more than one: annotators named by user number only are then told apart by instance.",
    )


class LabelStudioImportView(ResearcherRequiredMixin, View):
    template = "annotation/label_studio/import.html"

    def _page(self, request, project, form, status=200, errors=()):
        context = {"project": project, "form": form, "errors": errors}
        return render(request, self.template, context, status=status)

    def get(self, request, pk):
        return self._page(request, get_object_or_404(AnnotationProject, pk=pk), LabelStudioImportForm())

    def post(self, request, pk):
        project = get_object_or_404(AnnotationProject, pk=pk)
        form = LabelStudioImportForm(request.POST, request.FILES)
        if not form.is_valid():
            return self._page(request, project, form, status=400)
        try:
            report = label_studio_import(
                project=project,
                content=form.cleaned_data["file"].read(),
                stage_order=form.cleaned_data["stage"],
                accept_revisions=form.cleaned_data["accept_revisions"],
                instance=form.cleaned_data["instance"],
            )
        except LabelStudioImportFailed as exc:
            return self._page(request, project, form, status=400, errors=exc.sentences())
        messages.success(request, report.describe())
        for warning in [*report.warnings, *report.refused]:
            messages.warning(request, warning)
        return redirect("annotation:project", pk)
