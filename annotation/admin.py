"""Admin registrations of annotation; every model is registered with ResearcherModelAdmin."""

from django import forms
from django.contrib import admin
from django.db import transaction

from edufair_web.accounts.admin_site import ResearcherModelAdmin
from edufair_web.fixed_after_create import FixedAfterCreateAdmin

from .models import (
    Adjudication,
    AnnotationProject,
    Assignment,
    Comment,
    CrossStageConflict,
    Enrollment,
    ExampleView,
    GoldLabel,
    Guideline,
    GuidelineConfirmation,
    Item,
    Label,
    LabelQuestion,
    Stage,
    Thread,
    TrainingItem,
    WorkedExample,
)
from .selectors.labelling_settings import main_labelling_started
from .services.enrollment import enrollment_check
from .services.projects import gold_label_check, question_choices_clean
from .services.training import SetupError, stage_questions_check, worked_example_check


class RuledForm(forms.ModelForm):
    """An admin form that holds the row, as it would be saved, to its service's rule (the API's and the pages')."""

    def rule_values(self, *names: str) -> dict | None:
        """The fields as the row would hold them; None when one is missing (a field already in error)."""
        values = {name: self.cleaned_data.get(name, getattr(self.instance, name, None)) for name in names}
        return None if any(value is None for value in values.values()) else values

    def apply_rule(self, check, **values) -> None:
        try:
            check(**values)
        except SetupError as exc:
            field = exc.field if exc.field in self.fields else None
            self.add_error(field, str(exc))


@admin.register(AnnotationProject)
class AnnotationProjectAdmin(FixedAfterCreateAdmin, ResearcherModelAdmin):
    list_display = ("name", "kind", "preset", "source_audit_id", "created_at")
    list_filter = ("kind",)
    search_fields = ("name",)
    readonly_fields = ("preset",)  # stamped by applying a preset (services.projects), never typed


class LabelQuestionAdminForm(RuledForm):
    def clean_choices(self):
        try:
            return question_choices_clean(self.cleaned_data["choices"], question=self.instance)
        except SetupError as exc:
            raise forms.ValidationError(str(exc)) from exc


@admin.register(LabelQuestion)
class LabelQuestionAdmin(FixedAfterCreateAdmin, ResearcherModelAdmin):
    form = LabelQuestionAdminForm
    list_display = ("key", "project", "level", "allow_unsure", "allow_not_applicable")
    list_filter = ("project",)


@admin.register(Item)
class ItemAdmin(FixedAfterCreateAdmin, ResearcherModelAdmin):
    list_display = ("external_id", "project", "subject", "category", "modality")
    list_filter = ("project", "subject", "modality")
    search_fields = ("external_id", "category")


class StageAdminForm(RuledForm):
    def clean(self):
        cleaned = super().clean()
        if "questions" in cleaned:
            project = cleaned.get("project") or getattr(self.instance, "project", None)
            stage = self.instance if self.instance.pk is not None else None
            self.apply_rule(stage_questions_check, stage=stage, project=project, questions=list(cleaned["questions"]))
        return cleaned


@admin.register(Stage)
class StageAdmin(FixedAfterCreateAdmin, ResearcherModelAdmin):
    form = StageAdminForm
    list_display = ("name", "project", "order", "overlap", "resolution_policy", "pay_rate_per_hour", "pilot_size")
    list_filter = ("project",)
    filter_horizontal = ("questions",)

    def get_readonly_fields(self, request, obj=None):
        fields = super().get_readonly_fields(request, obj)
        if obj is not None and main_labelling_started(obj):
            return (*fields, "overlap")  # fixed once items hold labels (see services.assignment)
        return fields


class ViewOnlyAdmin:
    """Rows only their service writes, with checks the admin's plain form would skip: shown, never added or edited."""

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Guideline)
class GuidelineAdmin(ViewOnlyAdmin, ResearcherModelAdmin):
    """A guideline is published as a new version (services.training.guideline_publish: its gold isolation)."""

    list_display = ("stage", "version", "created_at")
    list_filter = ("stage__project",)


class WorkedExampleAdminForm(RuledForm):
    def clean(self):
        cleaned = super().clean()
        values = self.rule_values("stage", "item", "question", "kind", "value")
        if values:
            self.apply_rule(worked_example_check, **values)
        return cleaned


@admin.register(WorkedExample)
class WorkedExampleAdmin(FixedAfterCreateAdmin, ResearcherModelAdmin):
    form = WorkedExampleAdminForm
    list_display = ("stage", "item", "kind", "value")
    list_filter = ("stage", "kind")
    raw_id_fields = ("item",)


class GoldLabelAdminForm(RuledForm):
    def clean(self):
        cleaned = super().clean()
        values = self.rule_values("item", "question", "value")
        if values:
            self.apply_rule(gold_label_check, **values)
        return cleaned


@admin.register(GoldLabel)
class GoldLabelAdmin(FixedAfterCreateAdmin, ResearcherModelAdmin):
    form = GoldLabelAdminForm
    list_display = ("item", "question", "value")
    list_filter = ("question",)
    raw_id_fields = ("item",)


@admin.register(TrainingItem)
class TrainingItemAdmin(ViewOnlyAdmin, ResearcherModelAdmin):
    """The pilot and test are drawn from the gold pool (services.training.training_set_choose), never typed in."""

    list_display = ("stage", "phase", "item", "position")
    list_filter = ("stage", "phase")
    raw_id_fields = ("item",)


class EnrollmentAdminForm(RuledForm):
    def clean(self):
        cleaned = super().clean()
        values = self.rule_values("user")
        if values:
            self.apply_rule(enrollment_check, **values)
        return cleaned


@admin.register(Enrollment)
class EnrollmentAdmin(FixedAfterCreateAdmin, ResearcherModelAdmin):
    form = EnrollmentAdminForm
    list_display = ("user", "stage", "status", "pilot_score", "qualification_correct", "gate_passed", "gate_rule")
    list_filter = ("stage", "status")
    raw_id_fields = ("replaced_by",)


@admin.register(GuidelineConfirmation)
class GuidelineConfirmationAdmin(ResearcherModelAdmin):
    list_display = ("enrollment", "guideline", "confirmed_at")


@admin.register(ExampleView)
class ExampleViewAdmin(ResearcherModelAdmin):
    list_display = ("enrollment", "example", "seen_at")


@admin.register(Assignment)
class AssignmentAdmin(ResearcherModelAdmin):
    list_display = ("stage", "item", "annotator", "phase", "submitted_at")
    list_filter = ("stage", "phase")
    raw_id_fields = ("item",)


@admin.register(Label)
class LabelAdmin(ResearcherModelAdmin):
    list_display = ("assignment", "question", "phase", "round", "value", "unsure", "seconds")
    list_filter = ("phase", "round", "unsure")
    raw_id_fields = ("assignment",)


@admin.register(Thread)
class ThreadAdmin(ResearcherModelAdmin):
    list_display = ("stage", "item", "kind", "reason", "is_open")
    list_filter = ("kind", "is_open")
    raw_id_fields = ("item",)


@admin.register(Comment)
class CommentAdmin(ResearcherModelAdmin):
    list_display = ("thread", "author", "pinned", "created_at")
    list_filter = ("pinned",)


@admin.register(Adjudication)
class AdjudicationAdmin(ResearcherModelAdmin):
    list_display = ("stage", "item", "question", "method", "final_value", "decided_by")
    list_filter = ("method",)
    raw_id_fields = ("item",)


@admin.register(CrossStageConflict)
class CrossStageConflictAdmin(ResearcherModelAdmin):
    list_display = ("item", "earlier_stage", "later_stage", "disposition")
    list_filter = ("disposition",)
    raw_id_fields = ("item",)


# Main labelling.
from .models import HeldRevision, MainItem, StageLabelling  # noqa: E402


@admin.register(StageLabelling)
class StageLabellingAdmin(ViewOnlyAdmin, ResearcherModelAdmin):
    """Set on the stage page or the API (services.labelling: the pilot's rules, the item rule and its main items)."""

    list_display = ("stage", "strategy", "seed", "reservation_minutes", "pilot_feedback", "pilot_closed")


@admin.register(HeldRevision)
class HeldRevisionAdmin(ResearcherModelAdmin):
    """Revisions given after an item's resolution had started: kept for the record, not counted."""

    list_display = ("label", "value", "unsure", "given_at")
    raw_id_fields = ("label",)


@admin.register(MainItem)
class MainItemAdmin(ResearcherModelAdmin):
    list_display = ("stage", "item", "slots_taken", "status", "resolved_at")
    list_filter = ("status",)
    raw_id_fields = ("item",)


# Judge validation.
from annotation.models import JudgeScore, JudgeValidation, RubricVersion, RubricWorkshop  # noqa: E402


@admin.register(RubricVersion)
class RubricVersionAdmin(ResearcherModelAdmin):
    list_display = ("name", "version", "judge_template_id", "created_at")


@admin.register(JudgeValidation)
class JudgeValidationAdmin(ViewOnlyAdmin, ResearcherModelAdmin):
    """Thresholds and recorded verdicts are set by the judge-validation services (their bounds, the report)."""

    list_display = ("project", "judge_name", "rubric", "status", "recorded_at")
    list_filter = ("status",)


@admin.register(JudgeScore)
class JudgeScoreAdmin(ResearcherModelAdmin):
    list_display = ("validation", "item", "metric", "value", "status")


@admin.register(RubricWorkshop)
class RubricWorkshopAdmin(ResearcherModelAdmin):
    list_display = ("project", "held_on", "from_rubric", "to_rubric")


# Crowd entry links: every change goes through the service the page and the API use (`crowd_link_save`), from the
# page's own form.
from annotation.forms_people import CrowdLinkForm  # noqa: E402
from annotation.models import CrowdLink, CrowdRecruit  # noqa: E402
from annotation.services.crowd_entry_settings import crowd_link_save, link_trust  # noqa: E402


class CrowdLinkAdminForm(CrowdLinkForm):
    class Meta(CrowdLinkForm.Meta):
        fields = ["stage", *CrowdLinkForm.Meta.fields]

    def clean(self):
        cleaned = super().clean()
        if self.errors:
            return cleaned
        stage = cleaned.get("stage") or self.instance.stage
        values = self.settings()
        try:  # the service's own checks, as a dry run: saved for real in save_model
            with transaction.atomic():
                crowd_link_save(stage=stage, values=values)
                transaction.set_rollback(True)
        except SetupError as exc:
            raise forms.ValidationError(str(exc)) from exc
        self.link_values = (stage, values)
        return cleaned


@admin.register(CrowdLink)
class CrowdLinkAdmin(ResearcherModelAdmin):
    form = CrowdLinkAdminForm
    list_display = ("stage", "is_open", "max_recruits", "signature_required", "approved_only", "reservation_minutes")
    readonly_fields = ("key", "entry_secret", "trusts")

    def get_readonly_fields(self, request, obj=None):
        fields = super().get_readonly_fields(request, obj)
        return (*fields, "stage") if obj is not None else fields

    @admin.display(description="Who can enter")
    def trusts(self, obj) -> str:
        return link_trust(obj) if obj.pk else ""

    def save_model(self, request, obj, form, change):
        stage, values = form.link_values
        obj.pk = crowd_link_save(stage=stage, values=values).pk
        obj.refresh_from_db()


@admin.register(CrowdRecruit)
class CrowdRecruitAdmin(ResearcherModelAdmin):
    """Who took part and how it ended; written only by the crowd pages."""

    list_display = ("user", "link", "outcome", "code", "created_at", "finished_at")
    list_filter = ("outcome",)
    readonly_fields = (
        "link",
        "user",
        "participant_hash",
        "participant_id",
        "study_id",
        "session_id",
        "outcome",
        "code",
        "created_at",
        "last_seen_at",
        "finished_at",
    )
    fields = readonly_fields

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False
