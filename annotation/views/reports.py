"""Researcher pages for a project's report, its label exports and its cross-stage conflicts.

The report is the project's Appendix-D report (page and downloads in HTML, Markdown and JSON); the label exports are
CSV, JSONL and Label Studio JSON; the cross-stage conflicts come with their dispositions."""

from __future__ import annotations

from django.contrib import messages
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views import View

from annotation import reports
from annotation.models import AnnotationProject, CrossStageConflict
from annotation.report_sections import report_sections
from annotation.selectors import exports
from annotation.selectors.conflicts import disposition_counts, project_conflicts
from annotation.services import adjudication as adjudication_services
from annotation.services.conflicts import ConflictRefused
from edufair_web.accounts.permissions import ResearcherRequiredMixin
from edufair_web.converters import parse_id


class ReportView(ResearcherRequiredMixin, View):
    def get(self, request, pk):
        project = get_object_or_404(AnnotationProject, pk=pk)
        report = reports.project_report(project)
        return render(
            request,
            "annotation/reports/report.html",
            {"project": project, "report": report, "sections": report_sections(report)},
        )


class ReportDownloadView(ResearcherRequiredMixin, View):
    def get(self, request, pk, fmt):
        if fmt not in reports.FORMATS:
            raise Http404("Unknown format.")
        project = get_object_or_404(AnnotationProject, pk=pk)
        body, content_type = reports.render(reports.project_report(project), fmt)
        response = HttpResponse(body, content_type=content_type)
        response["Content-Disposition"] = f'attachment; filename="annotation-{project.pk}-report.{fmt}"'
        return response


class LabelsExportView(ResearcherRequiredMixin, View):
    def get(self, request, pk, fmt):
        if fmt not in exports.FORMATS:
            raise Http404("Unknown format.")
        project = get_object_or_404(AnnotationProject, pk=pk)
        body, content_type, filename = exports.export_labels(project, fmt)
        response = HttpResponse(body, content_type=content_type)
        response["Content-Disposition"] = f'attachment; filename="{filename}"'
        return response


class ConflictsView(ResearcherRequiredMixin, View):
    """List conflicts; POST action=detect finds new ones; POST conflict=<id>&disposition=… decides one."""

    def get(self, request, pk):
        project = get_object_or_404(AnnotationProject, pk=pk)
        conflicts = project_conflicts(project)
        return render(
            request,
            "annotation/reports/conflicts.html",
            {"project": project, "conflicts": conflicts, "summary": disposition_counts(project).describe()},
        )

    def post(self, request, pk):
        project = get_object_or_404(AnnotationProject, pk=pk)
        if request.POST.get("action") == "detect":
            found = adjudication_services.conflicts_detect(project=project)
            messages.success(request, f"{len(found)} cross-stage conflict(s) found.")
            return redirect("annotation:conflicts", pk)
        conflict = get_object_or_404(CrossStageConflict, pk=parse_id(request.POST.get("conflict", "")), project=project)
        try:
            adjudication_services.conflict_dispose(
                conflict=conflict,
                disposition=request.POST.get("disposition", ""),
                by=request.user,
                note=request.POST.get("note", ""),
            )
        except ConflictRefused as exc:
            messages.error(request, str(exc))
        return redirect("annotation:conflicts", pk)
