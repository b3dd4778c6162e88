"""Serializers of the audit engine's API: endpoints, audits, conditions, dialogues, turns, scores and ledger rows.

No field ever carries an API key: endpoints hold only the name of the environment variable, and ledger
rows hold what was sent (never headers)."""

import copy

from django.core.exceptions import ValidationError as DjangoValidationError
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from audits.endpoint_roles import ROLES
from audits.judge import DEFAULT_MAX_REASKS
from audits.models import Audit, Condition, Dialogue, LLMCall, ModelEndpoint, Turn, TurnScore
from audits.models.llm import ENDPOINT_REQUEST_FIELDS, validate_env_var_name
from audits.run_outcome import FAILED, FINISHED, FINISHED_WITH_FAILURES, run_outcome
from audits.selectors.endpoints import endpoint_list, endpoint_model_mismatches
from audits.selectors.run_pages import audit_question_count
from audits.selectors.runs import audit_requests_sent, audit_run_outcome
from audits.services.audit_lifecycle import CLONE_FACTORS
from edufair_web.json_parser import DepthBoundedJSONField
from edufair_web.text_limits import NOTE_MAX


class ModelMismatchSerializer(serializers.Serializer):
    model = serializers.CharField(help_text="The model configured when the calls were made.")
    reported_model = serializers.CharField(help_text="The model the server said answered.")
    calls = serializers.IntegerField()
    last_at = serializers.DateTimeField()


class ModelEndpointSerializer(serializers.ModelSerializer):
    is_simulation = serializers.BooleanField(read_only=True)
    roles = serializers.ListField(
        child=serializers.ChoiceField(choices=ROLES),
        allow_empty=False,
        required=False,
        help_text="What the endpoint may be in an audit (the launch form's lists); default every role.",
    )
    model_mismatches = serializers.SerializerMethodField(
        help_text="Ledger calls whose server reported another model than the configured one (a model swapped "
        "behind the URL: bump the revision with model-changed)."
    )

    class Meta:
        model = ModelEndpoint
        fields = [
            "id",
            "name",
            "provider",
            "is_simulation",
            "base_url",
            "model",
            "api_key_env",
            "temperature",
            "max_tokens",
            "timeout",
            "max_concurrency",
            "requests_per_minute",
            "tokens_per_minute",
            "revision",
            "model_mismatches",
            "extra_params",
            "simulation_config",
            "price_input_per_million",
            "price_output_per_million",
            "batch_capable",
            "batch_price_factor",
            "batch_fallback",
            *ENDPOINT_REQUEST_FIELDS,
            "roles",
            "description",
            "created_at",
        ]
        read_only_fields = ["created_at"]

    @extend_schema_field(ModelMismatchSerializer(many=True))
    def get_model_mismatches(self, endpoint: ModelEndpoint) -> list[dict]:
        if endpoint.pk is None:
            return []
        rows = endpoint_model_mismatches(endpoints=[endpoint]).get(endpoint.pk, [])
        return ModelMismatchSerializer(rows, many=True).data

    def validate_api_key_env(self, value: str) -> str:
        try:
            validate_env_var_name(value)
        except Exception as exc:  # Django's ValidationError → DRF's
            raise serializers.ValidationError(list(getattr(exc, "messages", [str(exc)]))) from None
        return value

    def validate(self, attrs: dict) -> dict:
        """The model's own rules (`ModelEndpoint.clean`: temperature, simulation bias, batch price and
        capability) on the endpoint as it would be saved, so the API refuses what the form refuses."""
        candidate = copy.copy(self.instance) if self.instance is not None else ModelEndpoint()
        for name, value in attrs.items():
            setattr(candidate, name, value)
        try:
            candidate.clean()
        except DjangoValidationError as exc:
            raise serializers.ValidationError(
                exc.message_dict if hasattr(exc, "error_dict") else exc.messages
            ) from None
        return attrs


class ConditionSerializer(serializers.ModelSerializer):
    class Meta:
        model = Condition
        fields = [
            "id",
            "key",
            "label",
            "kind",
            "dimension",
            "level",
            "name_cue",
            "name_gender",
            "name_ethnicity",
            "stated_gender",
            "perceived_gender",
            "persona_cue",
            "tutor_cue",
        ]


# How a run ended (audits.run_outcome): the stored status until it is finished, then what its dialogues became.
OUTCOMES = [*Audit.Status.values, FINISHED_WITH_FAILURES, FAILED]


class AuditSerializer(serializers.ModelSerializer):
    uses_simulation = serializers.BooleanField(read_only=True)
    conditions = ConditionSerializer(many=True, read_only=True)
    question_count = serializers.SerializerMethodField()
    outcome = serializers.SerializerMethodField(
        help_text="How the run ended: `status` until the audit is finished; then `finished` (every dialogue done), "
        "`finished_with_failures` (some failed) or `failed` (every dialogue failed: no results). `status` says only "
        "that no work remains."
    )

    class Meta:
        model = Audit
        fields = [
            "id",
            "name",
            "description",
            "status",
            "outcome",
            "uses_simulation",
            "tutors",
            "student_endpoint",
            "judge_endpoint",
            "check_endpoint",
            "seed",
            "t_max",
            "answer_precheck",
            "max_reasks",
            "batch_size",
            "question_selection",
            "design",
            "question_count",
            "conditions",
            "tutor_template",
            "tutor_informed_template",
            "student_template",
            "judge_template",
            "check_template",
            "cloned_from",
            "clone_change",
            "created_at",
            "launched_at",
            "finished_at",
        ]
        read_only_fields = fields

    def get_question_count(self, audit: Audit) -> int:
        return audit_question_count(audit=audit)

    @extend_schema_field(serializers.ChoiceField(choices=OUTCOMES))
    def get_outcome(self, audit: Audit) -> str:
        if audit.status != FINISHED:
            return audit.status
        if hasattr(audit, "n_done") and hasattr(audit, "n_failed"):  # counted with the list (selectors.runs.audit_list)
            return run_outcome(audit.status, done=audit.n_done, failed=audit.n_failed)
        return audit_run_outcome(audit=audit)


class RequestSentSerializer(serializers.Serializer):
    role = serializers.CharField()
    model = serializers.CharField()
    parameters = serializers.CharField(help_text="What every request of this role carries, in words.")
    note = serializers.CharField(help_text="For the student: the temperature it answers at, and why.")
    temperature = serializers.FloatField(
        allow_null=True, help_text="The temperature sent; null where the model takes none (its default)."
    )


class AuditDetailSerializer(AuditSerializer):
    """One audit, with what each of its models is sent: the student's temperature above all (0, the paper's fixed
    student, or none where the model cannot take one)."""

    requests_sent = serializers.SerializerMethodField()
    student_temperature = serializers.SerializerMethodField(
        help_text="The temperature the student ran at: 0, or null where its model takes no temperature and answers "
        "at its default (`requests_sent` says so in words)."
    )

    class Meta(AuditSerializer.Meta):
        fields = [*AuditSerializer.Meta.fields, "requests_sent", "student_temperature"]
        read_only_fields = fields

    @extend_schema_field(RequestSentSerializer(many=True))
    def get_requests_sent(self, audit: Audit) -> list[dict]:
        return audit_requests_sent(audit=audit)

    @extend_schema_field(serializers.FloatField(allow_null=True))
    def get_student_temperature(self, audit: Audit) -> float | None:
        return next(row["temperature"] for row in audit_requests_sent(audit=audit) if row["role"] == "student")


class AuditCreateSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200)
    description = serializers.CharField(required=False, allow_blank=True, default="", max_length=NOTE_MAX)
    tutors = serializers.PrimaryKeyRelatedField(queryset=endpoint_list(), many=True)
    student_endpoint = serializers.PrimaryKeyRelatedField(queryset=endpoint_list())
    judge_endpoint = serializers.PrimaryKeyRelatedField(queryset=endpoint_list())
    check_endpoint = serializers.PrimaryKeyRelatedField(queryset=endpoint_list(), required=False, allow_null=True)
    selection = serializers.DictField(
        help_text='Question selection: {"domains": [...], "fraction": 0.3 | "count": 20, "seed": 0}'
    )
    conditions = serializers.DictField(
        help_text='Condition choice: {"control": true, "explicit_dimensions": ["gender"], "implicit": false, '
        '"opposite": false, ...} (audits.conditions.ConditionChoice)'
    )
    seed = serializers.IntegerField(default=0)
    t_max = serializers.IntegerField(default=10, min_value=1, max_value=50)
    answer_precheck = serializers.BooleanField(default=False)
    max_reasks = serializers.IntegerField(default=DEFAULT_MAX_REASKS, min_value=0, max_value=10)
    launch = serializers.BooleanField(default=False, help_text="Launch right away.")


class CalibrationTutorSerializer(serializers.Serializer):
    """A planted bias for a calibration run's simulation tutor (`calibration_tutor_get_or_create` checks it)."""

    level = serializers.CharField(max_length=200, help_text="The cue label, dimension=level, e.g. first_language=…")
    metric = serializers.CharField(max_length=60, help_text="The tutor behaviour shifted, e.g. corrective_tone.")
    shift = serializers.FloatField(help_text="Added to the behaviour's probability for that level, e.g. −0.4.")
    seed = serializers.IntegerField(default=0, min_value=0)


class CloneSerializer(serializers.Serializer):
    factor = serializers.ChoiceField(choices=list(CLONE_FACTORS))
    value = DepthBoundedJSONField(
        help_text="An endpoint id, a template id, a seed, a list of tutor ids, or for `conditions` an object of the "
        "launch form's condition fields (control, explicit_dimensions, intersectional_dimensions, implicit, "
        "names_per_cell, tell_tutor_name, opposite; one left out takes the launch form's default)."
    )
    name = serializers.CharField(required=False, allow_blank=True, default="", max_length=200)


class TurnScoreSerializer(serializers.ModelSerializer):
    class Meta:
        model = TurnScore
        fields = ["metric", "value", "status", "problem", "raw", "rubric"]


class TurnSerializer(serializers.ModelSerializer):
    scores = TurnScoreSerializer(many=True, read_only=True)

    class Meta:
        model = Turn
        fields = ["index", "role", "text", "judge_status", "llm_call", "scores"]


class LLMCallSerializer(serializers.ModelSerializer):
    class Meta:
        model = LLMCall
        fields = [
            "id",
            "purpose",
            "model",
            "endpoint",
            "status",
            "attempts",
            "attempt_log",
            "error",
            "prompt_tokens",
            "completion_tokens",
            "latency_ms",
            "request",
            "response_text",
            "reasoning",
            "reasoning_tokens",
            "finish_reason",
            "reported_model",
            "created_at",
        ]


class DialogueSerializer(serializers.ModelSerializer):
    condition = ConditionSerializer(read_only=True)

    class Meta:
        model = Dialogue
        fields = [
            "id",
            "audit",
            "tutor",
            "question",
            "condition",
            "status",
            "end_reason",
            "error",
            "runs",
            "metrics",
            "calls_sent",
            "calls_cached",
            "started_at",
            "finished_at",
        ]


class DialogueDetailSerializer(DialogueSerializer):
    turns = TurnSerializer(many=True, read_only=True)
    calls = LLMCallSerializer(many=True, read_only=True)

    class Meta(DialogueSerializer.Meta):
        fields = [*DialogueSerializer.Meta.fields, "turns", "calls"]
