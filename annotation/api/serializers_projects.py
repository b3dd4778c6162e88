"""Serializers for the researchers' project-scripting API.

They cover projects, questions, items, gold, stages, guidelines, worked examples, enrolments and the pass-rate table.
Annotators never see these (gold is here)."""

from django.db import transaction
from rest_framework import serializers
from rest_framework.settings import api_settings

from annotation.models import (
    AnnotationProject,
    Enrollment,
    GoldLabel,
    Guideline,
    Item,
    LabelQuestion,
    Stage,
    StageLabelling,
    TrainingItem,
    WorkedExample,
)
from annotation.selectors.labelling_settings import labelling_settings, main_labelling_started
from annotation.selectors.projects import main_item_count
from annotation.selectors.training import own_gate_fields
from annotation.services.labelling import ItemRuleInvalid, stage_item_rule_describe, stage_item_rule_set
from annotation.services.projects import gold_label_check, question_choices_clean
from annotation.services.training import SetupError, stage_questions_check, worked_example_check
from edufair_web.accounts.roles import RESEARCHER, has_role
from edufair_web.fixed_after_create import FixedAfterCreateSerializer
from edufair_web.text_limits import LINE_MAX, NOTE_MAX
from edufair_web.upload_limits import MaxUploadSize, upload_limit, upload_size_error


def _rule(check, **values) -> None:
    """Run a service's rule; its refusal is a 400 naming the field at fault."""
    try:
        check(**values)
    except SetupError as exc:
        raise serializers.ValidationError({exc.field or api_settings.NON_FIELD_ERRORS_KEY: str(exc)}) from exc


class ProjectSerializer(FixedAfterCreateSerializer):
    preset = serializers.CharField(required=False, allow_blank=True, write_only=True, max_length=LINE_MAX)
    applied_preset = serializers.CharField(source="preset", read_only=True)

    class Meta:
        model = AnnotationProject
        fields = [
            "id",
            "name",
            "description",
            "kind",
            "source_audit_id",
            "categories",
            "subjects",
            "options",
            "preset",
            "applied_preset",
            "created_at",
        ]
        read_only_fields = ["created_at"]


class LabelQuestionSerializer(FixedAfterCreateSerializer):
    class Meta:
        model = LabelQuestion
        fields = [
            "id",
            "project",
            "key",
            "prompt",
            "help_text",
            "level",
            "choices",
            "allow_unsure",
            "allow_not_applicable",
            "justification_required_for",
            "positive_values",
            "about_turn",
            "position",
        ]

    def validate_choices(self, value):
        """The service's rule for choices (`question_choices_clean`), on create and update alike."""
        try:
            return question_choices_clean(value, question=self.instance)
        except SetupError as exc:
            raise serializers.ValidationError(str(exc)) from exc


class ItemSerializer(FixedAfterCreateSerializer):
    class Meta:
        model = Item
        fields = [
            "id",
            "project",
            "external_id",
            "payload",
            "subject",
            "category",
            "modality",
            "source_turn_id",
            "metadata",
            "created_at",
        ]
        read_only_fields = ["created_at"]


class GoldLabelSerializer(FixedAfterCreateSerializer):
    class Meta:
        model = GoldLabel
        fields = ["id", "item", "question", "value", "rationale"]

    def validate(self, attrs):
        """The service's rule (`gold_label_check`) on the gold label as it would be stored, on create and update."""
        attrs = super().validate(attrs)
        _rule(gold_label_check, **self.merged(attrs, "item", "question", "value"))
        return attrs


class StageItemRuleSerializer(serializers.Serializer):
    """Which items are the stage's main work (`StageLabelling.item_rule`), read from and written to the stage."""

    rule = serializers.ChoiceField(choices=StageLabelling.ItemRule.choices)
    source_stage = serializers.IntegerField(
        required=False, allow_null=True, help_text="Settled rule: the id of an earlier stage of the project."
    )
    source_question = serializers.IntegerField(
        required=False,
        allow_null=True,
        help_text="Settled rule: the id of that stage's question (default: its question with positive values).",
    )
    source_values = serializers.ListField(
        child=serializers.CharField(max_length=LINE_MAX),
        required=False,
        help_text="Settled rule: the values that qualify.",
    )
    item_ids = serializers.ListField(
        child=serializers.IntegerField(), required=False, help_text="List rule: item ids, in hand-out order."
    )
    description = serializers.CharField(read_only=True)
    main_item_count = serializers.IntegerField(read_only=True, help_text="The stage's main items so far.")

    def to_representation(self, stage):
        settings = labelling_settings(stage)
        return {
            "rule": settings.item_rule,
            "source_stage": settings.source_stage_id,
            "source_question": settings.source_question_id,
            "source_values": list(settings.source_values or []),
            "item_ids": list(settings.item_ids or []),
            "description": stage_item_rule_describe(settings),
            "main_item_count": main_item_count(stage),
        }

    def to_internal_value(self, data):
        # Read from the whole stage (source "*"), written under its own key for StageSerializer to apply.
        return {"main_items": super().to_internal_value(data)}


class StageSerializer(FixedAfterCreateSerializer):
    qualification_threshold = serializers.FloatField(read_only=True)
    main_items = StageItemRuleSerializer(source="*", required=False)

    class Meta:
        model = Stage
        fields = [
            "id",
            "project",
            "order",
            "name",
            "task",
            "pool",
            "recruits_per_subject",
            "questions",
            "overlap",
            "resolution_policy",
            "pay_rate_per_hour",
            "currency",
            "pilot_size",
            "pilot_threshold",
            "qualification_size",
            "qualification_min_correct",
            "qualification_threshold",
            "unsure_enabled",
            "unsure_rule",
            "unsure_min_coverage",
            "main_items",
        ]

    def validate(self, attrs):
        attrs = super().validate(attrs)
        project = attrs.get("project") or getattr(self.instance, "project", None)
        if "questions" in attrs:
            _rule(stage_questions_check, stage=self.instance, project=project, questions=attrs["questions"])
        changes_overlap = (
            self.instance is not None and attrs.get("overlap", self.instance.overlap) != self.instance.overlap
        )
        if changes_overlap and main_labelling_started(self.instance):
            raise serializers.ValidationError(
                {"overlap": "The overlap cannot change once main labelling has started: items already hold labels."}
            )
        return attrs

    def create(self, validated_data):
        rule = validated_data.pop("main_items", None)
        with transaction.atomic():
            stage = super().create(validated_data)
            self._apply_item_rule(stage, rule)
        return stage

    def update(self, instance, validated_data):
        rule = validated_data.pop("main_items", None)
        with transaction.atomic():
            stage = super().update(instance, validated_data)
            self._apply_item_rule(stage, rule)
        return stage

    @staticmethod
    def _apply_item_rule(stage: Stage, rule: dict | None) -> None:
        if rule is None:
            return
        try:
            stage_item_rule_set(stage=stage, **rule)
        except ItemRuleInvalid as exc:
            raise serializers.ValidationError({"main_items": exc.errors}) from exc


class GuidelineSerializer(serializers.ModelSerializer):
    class Meta:
        model = Guideline
        fields = ["id", "stage", "version", "text", "change_note", "created_at"]
        read_only_fields = ["version", "created_at"]


class WorkedExampleSerializer(FixedAfterCreateSerializer):
    class Meta:
        model = WorkedExample
        fields = ["id", "stage", "item", "question", "kind", "value", "rationale", "position"]
        read_only_fields = ["position"]

    def validate(self, attrs):
        """The service's rule (`worked_example_check`) on the example as it would be stored, on create and update:
        a PATCH of its item, question or value is held to what the create is."""
        attrs = super().validate(attrs)
        _rule(worked_example_check, **self.merged(attrs, "stage", "item", "question", "kind", "value"))
        return attrs


class TrainingItemSerializer(serializers.ModelSerializer):
    class Meta:
        model = TrainingItem
        fields = ["id", "stage", "item", "phase", "position"]


class TrainingSetChooseSerializer(serializers.Serializer):
    phase = serializers.ChoiceField(choices=TrainingItem.Phase.choices)
    size = serializers.IntegerField(min_value=1, required=False)
    seed = serializers.IntegerField(default=0)
    accept_uneven = serializers.BooleanField(default=False)


class EnrollmentSerializer(FixedAfterCreateSerializer):
    username = serializers.CharField(source="user.username", read_only=True)
    # Read-only text, not an enum: "status" is a field name other apps' enums use too (OpenAPI names).
    status = serializers.CharField(read_only=True, help_text="training, passed, failed or replaced")

    class Meta:
        model = Enrollment
        fields = [
            "id",
            "stage",
            "user",
            "username",
            "subject",
            "status",
            "enrolled_at",
            "examples_completed_at",
            "pilot_submitted_at",
            "norming_acknowledged_at",
            "qualification_submitted_at",
            "pilot_score",
            "pilot_coverage",
            "qualification_score",
            "qualification_correct",
            "qualification_total",
            "qualification_coverage",
            "gate_passed",
            "gate_rule",
            "gate_detail",
            "decided_at",
            "replaced_by",
            "replaced_at",
            "replacement_note",
        ]
        read_only_fields = [f for f in fields if f not in ("stage", "user", "subject")]

    def to_representation(self, instance):
        """Researchers read every field; an annotator reads their own gate as `own_gate_fields` allows."""
        data = super().to_representation(instance)
        request = self.context.get("request")
        if request is None or not has_role(request.user, RESEARCHER):
            data.update(own_gate_fields(instance))
        return data


class ReplacementSerializer(serializers.Serializer):
    replacement_user = serializers.IntegerField(required=False, allow_null=True)
    note = serializers.CharField(required=False, allow_blank=True, default="", max_length=NOTE_MAX)


class ItemImportSerializer(serializers.Serializer):
    format = serializers.ChoiceField(choices=["jsonl", "csv"])
    content = serializers.CharField(
        # In characters, for the schema; validate_content holds it to the byte limit in force.
        required=False,
        help_text="The file's text (or upload it as `file`).",
        max_length=upload_limit("items"),
    )
    file = serializers.FileField(required=False, validators=[MaxUploadSize("items")])

    def validate_content(self, value: str) -> str:
        error = upload_size_error("items", len(value.encode("utf-8", "surrogatepass")))
        if error:
            raise serializers.ValidationError(error)
        return value


class PassRateSerializer(serializers.Serializer):
    stage_id = serializers.IntegerField()
    stage_order = serializers.IntegerField()
    stage = serializers.CharField()
    recruited = serializers.IntegerField()
    passed = serializers.IntegerField()
    failed = serializers.IntegerField()
    replaced = serializers.IntegerField()
    in_training = serializers.IntegerField()
    pass_rate = serializers.FloatField(allow_null=True)
    pass_rate_text = serializers.CharField()
