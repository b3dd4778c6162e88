"""Researcher pages for setting up projects, their stages and training, and the pass-rate table.

Projects (created with the SafeTutors preset in one click), item import, stages with every enrolment's progress and
scores, guideline versions, worked examples, pilot and qualification sets, replacements, and the pass-rate table with
its export."""

from __future__ import annotations

import csv
import io

from django.contrib import messages
from django.http import HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views import View

from annotation.forms import (
    EnrollForm,
    GuidelineForm,
    ItemImportForm,
    ProjectForm,
    ReplacementForm,
    StageItemRuleForm,
    StageLabellingForm,
    TrainingSetForm,
    WorkedExampleForm,
)
from annotation.markdown_text import markdown_safe
from annotation.models import AnnotationProject, Enrollment, Stage
from annotation.selectors import exports
from annotation.selectors.first_run import project_first_run_checklists, stage_first_run_checklist
from annotation.selectors.labelling_settings import labelling_settings, main_labelling_started
from annotation.selectors.projects import (
    external_ids_of,
    gold_item_count,
    item_ids_by_external_id,
    main_item_count,
    pass_rate_table,
    project_item_by_external_id,
    project_item_count,
    project_questions,
    projects_list,
    stage_enrollments,
    stage_page_reads,
    stages_of,
)
from annotation.selectors.training import guideline_current, stage_gate_rules
from annotation.services.enrollment import enrollment_create, enrollment_mark_replacement
from annotation.services.importers import ImportFailed, items_import
from annotation.services.labelling import (
    ItemRuleInvalid,
    stage_item_rule_describe,
    stage_item_rule_set,
    stage_items_append,
    stage_labelling_configure,
)
from annotation.services.projects import project_create
from annotation.services.training import SetupError, guideline_publish, training_set_choose, worked_example_add
from edufair_web.accounts.permissions import ResearcherRequiredMixin
from edufair_web.csv_cells import neutralise_cell

PASS_RATE_COLUMNS = (
    "stage_order",
    "stage",
    "recruited",
    "passed",
    "failed",
    "replaced",
    "in_training",
    "pass_rate",
    "pass_rate_text",
)  # noqa: E501


class ProjectListView(ResearcherRequiredMixin, View):
    def get(self, request):
        return render(request, "annotation/project_list.html", {"projects": projects_list()})


class ProjectCreateView(ResearcherRequiredMixin, View):
    def get(self, request):
        return render(request, "annotation/project_form.html", {"form": ProjectForm()})

    def post(self, request):
        form = ProjectForm(request.POST)
        if not form.is_valid():
            return render(request, "annotation/project_form.html", {"form": form}, status=400)
        try:
            project = project_create(
                name=form.cleaned_data["name"],
                description=form.cleaned_data["description"],
                categories=form.cleaned_data["categories"],
                subjects=form.cleaned_data["subjects"],
                preset=form.cleaned_data["preset"],
                by=request.user,
            )
        except SetupError as exc:
            form.add_error(None, str(exc))
            return render(request, "annotation/project_form.html", {"form": form}, status=400)
        messages.success(request, f"Project “{project.name}” created.")
        return redirect("annotation:project", project.pk)


class ProjectDetailView(ResearcherRequiredMixin, View):
    def get(self, request, pk, import_form=None, status=200, left_off_lists=()):
        project = get_object_or_404(AnnotationProject, pk=pk)
        checklists = project_first_run_checklists(project)
        by_stage = {checklist.stage.pk: checklist for checklist in checklists}
        stages = list(stages_of(project))
        for stage in stages:
            stage.checklist = by_stage.get(stage.pk)
        context = {
            "left_off_lists": left_off_lists,
            "checklists": [checklist for checklist in checklists if not checklist.ready],
            "project": project,
            "stages": stages,
            "pass_rates": pass_rate_table(project),
            "item_count": project_item_count(project),
            "gold_item_count": gold_item_count(project),
            "questions": project_questions(project),
            "import_form": import_form or ItemImportForm(),
            "export_formats": exports.FORMATS,
        }
        return render(request, "annotation/project_detail.html", context, status=status)


class ItemImportView(ResearcherRequiredMixin, View):
    def post(self, request, pk):
        project = get_object_or_404(AnnotationProject, pk=pk)
        form = ItemImportForm(request.POST, request.FILES)
        if not form.is_valid():
            return ProjectDetailView().get(request, pk, import_form=form, status=400)
        try:
            report = items_import(
                project=project, content=form.cleaned_data["file"].read(), fmt=form.cleaned_data["format"]
            )
        except ImportFailed as exc:
            for sentence in exc.sentences(20):
                form.add_error(None, sentence)
            return ProjectDetailView().get(request, pk, import_form=form, status=400)
        messages.success(request, report.summary())
        if report.left_off_lists:  # the import result page: what the import did not reach, and the way to add it
            return ProjectDetailView().get(request, pk, left_off_lists=report.left_off_lists)
        return redirect("annotation:project", pk)


class PassRateExportView(ResearcherRequiredMixin, View):
    def get(self, request, pk, fmt):
        project = get_object_or_404(AnnotationProject, pk=pk)
        rows = pass_rate_table(project)
        if fmt == "json":
            return JsonResponse({"project": project.pk, "name": project.name, "stages": rows})
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=PASS_RATE_COLUMNS, extrasaction="ignore")
        writer.writeheader()
        # Stage names are free text: neutralise formula cells like every other CSV export.
        writer.writerows({key: neutralise_cell(value) for key, value in row.items()} for row in rows)
        response = HttpResponse(buffer.getvalue(), content_type="text/csv")
        response["Content-Disposition"] = f'attachment; filename="project-{project.pk}-pass-rates.csv"'
        return response


class StageDetailView(ResearcherRequiredMixin, View):
    def get(self, request, pk, forms=None, status=200):
        stage = get_object_or_404(Stage.objects.select_related("project"), pk=pk)
        forms = forms or {}
        guideline = guideline_current(stage)
        context = {
            "stage": stage,
            "project": stage.project,
            "checklist": stage_first_run_checklist(stage),
            "export_formats": exports.FORMATS,
            **stage_page_reads(stage),
            "enrollments": stage_enrollments(stage),
            "guideline_html": markdown_safe(guideline.text) if guideline else "",
            "gate_rules": stage_gate_rules(stage),
            "guideline_form": forms.get("guideline")
            or GuidelineForm(initial={"text": guideline.text if guideline else ""}),
            "enroll_form": forms.get("enroll") or EnrollForm(stage=stage),
            "training_set_form": forms.get("training_set") or TrainingSetForm(),
            "example_form": forms.get("example") or WorkedExampleForm(stage=stage),
            "replacement_form": ReplacementForm(),
            "labelling_form": forms.get("labelling") or StageLabellingForm(instance=labelling_settings(stage)),
            "main_labelling_started": main_labelling_started(stage),
            "item_rule_form": forms.get("items") or _item_rule_form(stage),
            "item_rule_text": stage_item_rule_describe(labelling_settings(stage)),
            "main_item_count": main_item_count(stage),
        }
        return render(request, "annotation/stage_detail.html", context, status=status)


def _item_rule_form(stage: Stage) -> StageItemRuleForm:
    settings = labelling_settings(stage)
    listed = external_ids_of(settings.item_ids or [])
    initial = {
        "rule": settings.item_rule,
        "source_stage": settings.source_stage_id,
        "source_values": ", ".join(settings.source_values or []),
        "items": "\n".join(listed[pk] for pk in settings.item_ids or [] if pk in listed),
    }
    return StageItemRuleForm(initial=initial, stage=stage)


class StageActionView(ResearcherRequiredMixin, View):
    """The stage page's forms post here: publish a guideline, enrol, choose a training set, add an example,
    set how main items are handed out."""

    def post(self, request, pk, action):
        stage = get_object_or_404(Stage.objects.select_related("project"), pk=pk)
        handlers = {
            "guideline": self._guideline,
            "enroll": self._enroll,
            "training_set": self._training_set,
            "example": self._example,
            "labelling": self._labelling,
            "items": self._items,
            "add_items": self._add_items,
        }
        if action not in handlers:
            return HttpResponse(status=404)
        form = handlers[action](request, stage)
        if form is not None:
            return StageDetailView().get(request, pk, forms={action: form}, status=400)
        return redirect("annotation:stage", pk)

    def _labelling(self, request, stage):
        form = StageLabellingForm(request.POST, instance=labelling_settings(stage))
        if not form.is_valid():
            return form
        try:
            stage_labelling_configure(stage=stage, **form.cleaned_data)
        except ValueError as exc:
            form.add_error(None, str(exc))
            return form
        messages.success(request, "Assignment settings saved; they apply to the next item an annotator asks for.")
        return None

    def _items(self, request, stage):
        form = StageItemRuleForm(request.POST, stage=stage)
        if not form.is_valid():
            return form
        data = form.cleaned_data
        known = item_ids_by_external_id(stage.project, data["items"])
        unknown = [external_id for external_id in data["items"] if external_id not in known]
        if data["rule"] == "list" and unknown:
            form.add_error("items", f"No such items in this project: {', '.join(unknown[:10])}.")
            return form
        try:
            settings, synced = stage_item_rule_set(
                stage=stage,
                rule=data["rule"],
                source_stage=data["source_stage"],
                source_values=data["source_values"],
                item_ids=[known[external_id] for external_id in data["items"]],
            )
        except ItemRuleInvalid as exc:
            for field, message in exc.errors.items():
                form.add_error(field if field in form.fields else None, message)
            return form
        done = f" {synced.total} main items now." if synced is not None else ""
        messages.success(request, f"Main items: {stage_item_rule_describe(settings)}{done}")
        return None

    def _add_items(self, request, stage):
        """Imported items the stage's explicit list left out, added to its end (the import result's button)."""
        external_ids = [v for v in request.POST.get("items", "").replace(",", " ").split() if v]
        known = item_ids_by_external_id(stage.project, external_ids)
        try:
            _, synced, added = stage_items_append(stage=stage, item_ids=[known[e] for e in external_ids if e in known])
        except ItemRuleInvalid as exc:
            messages.error(request, str(exc))
            return None
        done = f" {synced.total} main items now." if synced is not None else ""
        messages.success(request, f"{added} item{'s' if added != 1 else ''} added to the stage's item list.{done}")
        return None

    def _guideline(self, request, stage):
        form = GuidelineForm(request.POST)
        if not form.is_valid():
            return form
        try:
            guideline = guideline_publish(
                stage=stage,
                text=form.cleaned_data["text"],
                change_note=form.cleaned_data["change_note"],
                by=request.user,
            )
        except SetupError as exc:  # e.g. the text or a pinned clarification names a training item
            form.add_error(None, str(exc))
            return form
        messages.success(request, f"Guideline v{guideline.version} published; annotators must confirm it again.")
        return None

    def _enroll(self, request, stage):
        form = EnrollForm(request.POST, stage=stage)
        if not form.is_valid():
            return form
        try:
            enrollment_create(stage=stage, user=form.cleaned_data["user"], subject=form.cleaned_data["subject"])
        except SetupError as exc:
            form.add_error(None, str(exc))
            return form
        messages.success(request, f"{form.cleaned_data['user'].username} enrolled.")
        return None

    def _training_set(self, request, stage):
        form = TrainingSetForm(request.POST)
        if not form.is_valid():
            return form
        try:
            sample = training_set_choose(
                stage=stage,
                phase=form.cleaned_data["phase"],
                size=form.cleaned_data["size"],
                seed=form.cleaned_data["seed"] or 0,
                accept_uneven=form.cleaned_data["accept_uneven"],
            )
        except SetupError as exc:
            form.add_error(None, str(exc))
            return form
        note = "" if sample.even else " The spread is not even: " + "; ".join(sample.problems)
        messages.success(request, f"{len(sample.item_ids)} items chosen for the {form.cleaned_data['phase']}.{note}")
        return None

    def _example(self, request, stage):
        form = WorkedExampleForm(request.POST, stage=stage)
        if not form.is_valid():
            return form
        item = project_item_by_external_id(stage.project, form.cleaned_data["item"])
        if item is None:
            form.add_error("item", "No item with this id in the project.")
            return form
        try:
            worked_example_add(
                stage=stage,
                item=item,
                question=form.cleaned_data["question"],
                kind=form.cleaned_data["kind"],
                value=form.cleaned_data["value"],
                rationale=form.cleaned_data["rationale"],
            )
        except SetupError as exc:
            form.add_error(None, str(exc))
            return form
        messages.success(request, "Worked example added.")
        return None


class ReplacementView(ResearcherRequiredMixin, View):
    def post(self, request, pk):
        enrollment = get_object_or_404(Enrollment, pk=pk)
        form = ReplacementForm(request.POST)
        if form.is_valid():
            try:
                enrollment_mark_replacement(
                    enrollment=enrollment,
                    replacement_user=form.cleaned_data["replacement"],
                    note=form.cleaned_data["note"],
                    by=request.user,
                )
                messages.success(request, f"{enrollment.user.username} marked as replaced.")
            except SetupError as exc:
                messages.error(request, str(exc))
        else:
            messages.error(request, "The replacement form was not valid.")
        return redirect("annotation:stage", enrollment.stage_id)
