"""Admin registrations of audits; every model is registered with ResearcherModelAdmin.

A prompt template version that an audit has used cannot be deleted here, and saving an edit of it stores
the family's next version instead of changing it ("Save as new" does the same for any version).
"""

from django import forms
from django.contrib import admin, messages

from audits.forms import EndpointRolesField
from audits.models import DemographicDimension, DemographicLevel, NameCue, PromptTemplate, Question, QuestionImport
from audits.selectors.design import prompt_template_newest
from audits.services.design import prompt_template_revise
from edufair_web.accounts.admin_site import ResearcherModelAdmin


@admin.register(QuestionImport)
class QuestionImportAdmin(ResearcherModelAdmin):
    list_display = (
        "id",
        "source",
        "original_filename",
        "status",
        "questions_created",
        "questions_existing",
        "created_at",
    )
    list_filter = ("source", "status")
    readonly_fields = (
        "file_sha256", "file_size", "funnel", "status", "phase", "progress_done", "progress_total", "error",
        "questions_created", "questions_existing", "created_at", "started_at", "finished_at",
    )  # fmt: skip


@admin.register(Question)
class QuestionAdmin(ResearcherModelAdmin):
    list_display = ("id", "domain", "source", "source_id", "short_text", "classifier_confidence")
    list_filter = ("domain", "source")
    search_fields = ("text", "source_id")
    raw_id_fields = ("first_import",)
    filter_horizontal = ()
    readonly_fields = ("content_hash", "created_at")

    @admin.display(description="text")
    def short_text(self, obj: Question) -> str:
        return obj.text[:80]


class DemographicLevelInline(admin.TabularInline):
    model = DemographicLevel
    extra = 0
    fields = ("key", "label", "persona_statement", "tutor_statement", "order")


@admin.register(DemographicDimension)
class DemographicDimensionAdmin(ResearcherModelAdmin):
    list_display = ("key", "name", "order")
    inlines = [DemographicLevelInline]


@admin.register(DemographicLevel)
class DemographicLevelAdmin(ResearcherModelAdmin):
    list_display = ("dimension", "key", "label", "persona_statement")
    list_filter = ("dimension",)


@admin.register(NameCue)
class NameCueAdmin(ResearcherModelAdmin):
    list_display = ("name", "gender", "ethnicity", "active")
    list_filter = ("gender", "ethnicity", "active")
    search_fields = ("name",)


@admin.register(PromptTemplate)
class PromptTemplateAdmin(ResearcherModelAdmin):
    list_display = ("kind", "name", "version", "used_at", "created_at")
    list_filter = ("kind", "name")
    readonly_fields = ("version", "previous", "used_at", "created_at", "created_by")
    save_as = True  # "Save as new" stores the next version of the family

    def get_readonly_fields(self, request, obj=None):
        if obj is not None and obj.is_used:
            return ("kind", "name", *self.readonly_fields)
        return self.readonly_fields

    def has_delete_permission(self, request, obj=None) -> bool:
        if obj is not None and obj.is_used:
            return False
        return super().has_delete_permission(request, obj)

    def save_model(self, request, obj, form, change):
        if change:
            stored = PromptTemplate.objects.get(pk=obj.pk)
            if stored.is_used:
                # A used version never changes: the edit becomes the family's next version.
                new = prompt_template_revise(
                    template=stored, text=obj.text, description=obj.description, metrics=obj.metrics, user=request.user
                )
                obj.pk, obj.version, obj.previous_id, obj.used_at = new.pk, new.version, new.previous_id, None
                messages.warning(request, f"{stored} has been used by an audit; your edit was saved as {new}.")
                return
            super().save_model(request, obj, form, change)
            return
        latest = prompt_template_newest(kind=obj.kind, name=obj.name)
        obj.version = latest.version + 1 if latest else 1
        obj.previous = latest
        obj.created_by = request.user
        obj.used_at = None
        super().save_model(request, obj, form, change)


# --- audit engine: endpoints, the ledger, audits and their dialogues ----------------------------------

from audits.models import Audit, Condition, Dialogue, LLMCall, ModelEndpoint, Turn, TurnScore  # noqa: E402


class ModelEndpointAdminForm(forms.ModelForm):
    """The admin's endpoint form: roles as checkboxes (the admin adds the model and every field)."""

    roles = EndpointRolesField()


@admin.register(ModelEndpoint)
class ModelEndpointAdmin(ResearcherModelAdmin):
    form = ModelEndpointAdminForm
    list_display = ("name", "provider", "model", "roles", "base_url", "api_key_env", "max_concurrency")
    list_filter = ("provider",)
    search_fields = ("name", "model")


@admin.register(LLMCall)
class LLMCallAdmin(ResearcherModelAdmin):
    list_display = ("id", "purpose", "model", "status", "attempts", "prompt_tokens", "completion_tokens", "created_at")
    list_filter = ("status", "purpose")
    search_fields = ("request_hash",)
    readonly_fields = [f.name for f in LLMCall._meta.fields]


class ConditionInline(admin.TabularInline):
    model = Condition
    extra = 0
    fields = ("key", "kind", "dimension", "level", "name_cue", "stated_gender", "perceived_gender")
    readonly_fields = fields


@admin.register(Audit)
class AuditAdmin(ResearcherModelAdmin):
    list_display = ("id", "name", "status", "seed", "t_max", "created_at", "finished_at")
    list_filter = ("status",)
    filter_horizontal = ("tutors",)
    raw_id_fields = ("questions", "cloned_from")
    inlines = [ConditionInline]


class TurnInline(admin.TabularInline):
    model = Turn
    extra = 0
    fields = ("index", "role", "text", "judge_status")
    readonly_fields = fields


@admin.register(Dialogue)
class DialogueAdmin(ResearcherModelAdmin):
    list_display = ("id", "audit", "tutor", "question", "condition", "status", "end_reason", "runs")
    list_filter = ("status", "end_reason")
    raw_id_fields = ("audit", "tutor", "question", "condition", "calls")
    inlines = [TurnInline]


@admin.register(TurnScore)
class TurnScoreAdmin(ResearcherModelAdmin):
    list_display = ("id", "turn", "metric", "value", "status", "rubric")
    list_filter = ("metric", "status")
    raw_id_fields = ("turn", "judge_call")


# --- fairness results cache (read-only: rows are written by audits.services.analysis) -------------------
from audits.models import AnalysisResult  # noqa: E402


@admin.register(AnalysisResult)
class AnalysisResultAdmin(ResearcherModelAdmin):
    list_display = ("id", "audit", "parameters_hash", "n_scores", "seconds", "computed_at")
    raw_id_fields = ("audit",)
    readonly_fields = ("audit", "parameters_hash", "parameters", "scores_fingerprint", "n_scores", "seconds")
    exclude = ("result",)  # large; the results page and exports show it
