"""Serializers of the question bank and demographic design API."""

from rest_framework import serializers

from audits.forms import IMPORT_SOURCE_CHOICES
from audits.models import DemographicDimension, DemographicLevel, NameCue, PromptTemplate, Question, QuestionImport
from audits.prompt_templates import template_metrics_errors, template_placeholder_errors
from edufair_web.json_input import JSONInputError, loads
from edufair_web.json_parser import DepthBoundedJSONField
from edufair_web.text_limits import DOCUMENT_MAX, NOTE_MAX
from edufair_web.upload_limits import MaxUploadSize

# Read-only source fields are plain text in the schema: one "source" enum per serializer would collide with
# the upload's source choices (which name the file format, not the stored source).
SOURCE_HELP = "socrateach, sciq or generic"


class QuestionSerializer(serializers.ModelSerializer):
    source = serializers.CharField(read_only=True, help_text=SOURCE_HELP)

    class Meta:
        model = Question
        fields = [
            "id", "domain", "source", "source_id", "content_hash", "text", "answer", "solution", "choices", "support",
            "classifier_confidence", "reference_dialogue", "metadata", "first_import", "created_at",
        ]  # fmt: skip
        read_only_fields = fields


class QuestionImportSerializer(serializers.ModelSerializer):
    source = serializers.CharField(read_only=True, help_text=SOURCE_HELP)
    progress_percent = serializers.IntegerField(read_only=True)

    class Meta:
        model = QuestionImport
        fields = [
            "id", "source", "original_filename", "file_size", "file_sha256", "parameters", "status", "phase",
            "progress_done", "progress_total", "progress_percent", "funnel", "questions_created",
            "questions_existing", "error", "created_at", "started_at", "finished_at",
        ]  # fmt: skip
        read_only_fields = fields


class QuestionImportUploadSerializer(serializers.Serializer):
    source = serializers.ChoiceField(choices=[value for value, _ in IMPORT_SOURCE_CHOICES])
    file = serializers.FileField(validators=[MaxUploadSize("questions")])
    parameters = DepthBoundedJSONField(
        required=False,
        default=dict,
        help_text='Thresholds and seed, e.g. {"min_exchanges": 4} or {"threshold": 0.65, "per_domain_max": 500, '
        '"seed": 0}. In a multipart upload, a JSON text.',
    )

    def validate_parameters(self, value):
        if isinstance(value, str):
            try:
                value = loads(value or "{}")
            except JSONInputError as error:
                raise serializers.ValidationError(str(error)) from None
        if not isinstance(value, dict):
            raise serializers.ValidationError("expected a JSON object")
        return value


class DemographicLevelSerializer(serializers.ModelSerializer):
    class Meta:
        model = DemographicLevel
        fields = ["id", "dimension", "key", "label", "persona_statement", "tutor_statement", "order"]


class DemographicDimensionSerializer(serializers.ModelSerializer):
    levels = DemographicLevelSerializer(many=True, read_only=True)

    class Meta:
        model = DemographicDimension
        fields = ["id", "key", "name", "description", "order", "levels"]


class NameCueSerializer(serializers.ModelSerializer):
    class Meta:
        model = NameCue
        fields = ["id", "name", "gender", "ethnicity", "active"]


class PromptTemplateSerializer(serializers.ModelSerializer):
    is_used = serializers.BooleanField(read_only=True)

    class Meta:
        model = PromptTemplate
        fields = [
            "id",
            "kind",
            "name",
            "version",
            "text",
            "description",
            "metrics",
            "previous",
            "created_at",
            "used_at",
            "is_used",
        ]
        read_only_fields = ["version", "previous", "created_at", "used_at", "is_used"]

    metrics = serializers.ListField(
        child=serializers.CharField(max_length=60),
        required=False,
        max_length=50,
        help_text="A judge rubric's metrics, in order (the default rubric's when not given); empty for other kinds.",
    )

    def validate(self, attrs):
        problems = template_placeholder_errors(attrs.get("kind", ""), attrs.get("text", ""))
        if problems:
            raise serializers.ValidationError({"text": problems})
        problems = template_metrics_errors(attrs.get("kind", ""), attrs.get("metrics"))
        if problems:
            raise serializers.ValidationError({"metrics": problems})
        return attrs


class PromptTemplateReviseSerializer(serializers.Serializer):
    text = serializers.CharField(max_length=DOCUMENT_MAX)
    description = serializers.CharField(required=False, allow_blank=True, max_length=NOTE_MAX)
    metrics = serializers.ListField(
        child=serializers.CharField(max_length=60),
        required=False,
        max_length=50,
        help_text="A judge rubric's metrics for the new version (those of the revised version when not given).",
    )
