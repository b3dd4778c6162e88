"""Serializers of the judge-validation API: the bodies its views read and return.

Requests: create a validation project from an audit, add a judge, set thresholds, record a workshop, hide or show the
persona cue, and import an MRBench-style file."""

from drf_spectacular.utils import inline_serializer
from rest_framework import serializers

from annotation.judge_validation.report import VERDICT_RULES
from annotation.judge_validation.rubric import METRIC_QUESTIONS
from annotation.judge_validation.services import DEFAULT_OVERLAP, DEFAULT_SAMPLE_SIZE, DEFAULT_TRAINING_POOL
from annotation.models import JudgeValidation, RubricWorkshop
from edufair_web.text_limits import DOCUMENT_MAX, LINE_MAX, NOTE_MAX
from edufair_web.upload_limits import MaxUploadSize


class ValidationProjectCreateSerializer(serializers.Serializer):
    audit = serializers.IntegerField(help_text="The audit whose tutor turns are sampled.")
    size = serializers.IntegerField(
        default=DEFAULT_SAMPLE_SIZE, min_value=1, help_text="Turns to sample in proportion to the strata."
    )
    per_stratum = serializers.IntegerField(
        required=False,
        allow_null=True,
        default=None,
        min_value=1,
        help_text=(
            "Turns from every stratum (tutor × domain × condition; all of a smaller one's) instead of a "
            "proportional sample of `size`."
        ),
    )
    seed = serializers.IntegerField(default=0)
    hide_persona_cue = serializers.BooleanField(default=True)
    overlap = serializers.IntegerField(default=DEFAULT_OVERLAP, min_value=2, max_value=3)
    training_pool = serializers.IntegerField(default=DEFAULT_TRAINING_POOL, min_value=2)
    human_alpha_min = serializers.FloatField(default=0.80, min_value=-1, max_value=1)
    judge_agreement_min = serializers.FloatField(
        default=0.80,
        min_value=0,
        max_value=1,
        help_text="The least Cohen's κ (linear) between the judge and the human consensus for a pass.",
    )
    name = serializers.CharField(required=False, allow_blank=True, default="", max_length=LINE_MAX)


class JudgeAddSerializer(serializers.Serializer):
    judge_endpoint = serializers.IntegerField(help_text="A model endpoint to validate as a judge.")
    rubric = serializers.IntegerField(required=False, help_text="Rubric version id; default: the latest.")


class ThresholdsSerializer(serializers.Serializer):
    human_alpha_min = serializers.FloatField(
        min_value=-1, max_value=1, help_text="The least human α before discussion."
    )
    judge_agreement_min = serializers.FloatField(
        min_value=0, max_value=1, help_text="The least Cohen's κ (linear) between the judge and the human consensus."
    )


class DisagreementSerializer(serializers.Serializer):
    item = serializers.IntegerField()
    metric = serializers.ChoiceField(choices=list(METRIC_QUESTIONS))
    note = serializers.CharField(allow_blank=True, default="", max_length=NOTE_MAX)


class WorkshopSerializer(serializers.Serializer):
    from_rubric = serializers.IntegerField(required=False, help_text="Default: the project's latest version.")
    held_on = serializers.DateField()
    participants = serializers.CharField(allow_blank=True, default="", max_length=NOTE_MAX)
    notes = serializers.CharField(allow_blank=True, default="", max_length=NOTE_MAX)
    disagreements = DisagreementSerializer(many=True, default=list)
    guideline = serializers.CharField(
        help_text="The new version's human guideline (Markdown).", max_length=DOCUMENT_MAX
    )
    changed_metrics = serializers.ListField(child=serializers.ChoiceField(choices=list(METRIC_QUESTIONS)), default=list)
    judge_prompt = serializers.CharField(required=False, allow_blank=True, default="", max_length=DOCUMENT_MAX)


class PersonaSerializer(serializers.Serializer):
    hidden = serializers.BooleanField()


class JudgeValidationSerializer(serializers.ModelSerializer):
    rubric = serializers.CharField(source="rubric.label", read_only=True)

    class Meta:
        model = JudgeValidation
        fields = [
            "id",
            "project",
            "audit_id",
            "judge_endpoint_id",
            "judge_name",
            "rubric",
            "human_alpha_min",
            "judge_agreement_min",
            "status",
            "calls_sent",
            "calls_cached",
            "scored_at",
            "recorded_at",
            "result",
        ]


class WorkshopOutSerializer(serializers.ModelSerializer):
    from_rubric = serializers.CharField(source="from_rubric.label")
    to_rubric = serializers.CharField(source="to_rubric.label", allow_null=True)

    class Meta:
        model = RubricWorkshop
        fields = ["id", "project", "from_rubric", "to_rubric", "held_on", "notes", "disagreements", "relabel_stage"]


class MRBenchImportSerializer(serializers.Serializer):
    file = serializers.FileField(
        help_text="A published MRBench V1/V2 or BEA 2025 JSON file, as it is (at most ITEM_IMPORT_MAX_BYTES).",
        validators=[MaxUploadSize("items")],
    )
    name = serializers.CharField(required=False, allow_blank=True, default="", max_length=200)


# --- Response bodies (documented in the OpenAPI schema) ---------------------------------------------


class JudgeValidationRunSerializer(JudgeValidationSerializer):
    """A judge with the progress of its latest run (null before any run)."""

    run = serializers.DictField(allow_null=True, read_only=True)

    class Meta(JudgeValidationSerializer.Meta):
        fields = [*JudgeValidationSerializer.Meta.fields, "run"]


class ValidationProjectCreatedSerializer(serializers.Serializer):
    project = serializers.IntegerField()
    stage = serializers.IntegerField()
    items = serializers.IntegerField()
    sample = serializers.DictField()
    hide_persona_cue = serializers.BooleanField()
    validations = JudgeValidationSerializer(many=True)


class VerdictRuleSerializer(serializers.Serializer):
    name = serializers.ChoiceField(choices=list(VERDICT_RULES))
    description = serializers.CharField()


class ValidationReportSerializer(serializers.Serializer):
    project = serializers.DictField()
    rubric = serializers.DictField()
    thresholds = serializers.DictField()
    verdict_rule = VerdictRuleSerializer(help_text="The rule every verdict of this response follows.")
    verdict_rules = VerdictRuleSerializer(many=True, help_text="Every rule that can be chosen with ?rule=.")
    alt_test = serializers.DictField(
        help_text="The alt-test's ε (?epsilon=) with its meaning, and the defaults' meanings (0.2 experts, 0.1 crowd)."
    )
    n_sample = serializers.IntegerField()
    consensus_source = serializers.CharField()
    judges = serializers.ListField(child=serializers.DictField())
    metrics = serializers.ListField(
        child=serializers.DictField(),
        help_text=(
            "Per metric: human α with its units (items rated, items with ≥ 2 ratings, pairable values), and per "
            "judge κ with its interval and units (turns rated by both), and the verdict under verdict_rule: "
            "outcome, rule, n, interval, each condition in words (met true / false / null), reasons; "
            "verdict_by_rule gives the outcome under every rule for comparison. layers: (a) human_ceiling (α with "
            "its interval, units and P(α < 0.667 / 0.800); per annotator κ with the others' majority and α without "
            "them); per judge (b) judge_vs_humans (κ linear and unweighted, AC1 and AC2 with intervals, class shares, "
            "prevalence_warning, alt_test: omega, rho, passed, epsilon, per_annotator, unmet) and (c) direction "
            "(mean judge − human with its interval, by_stratum, rank_agreement: Kendall τ per tutor / condition "
            "with its interval); judges_by_rho ranks the judges."
        ),
    )
    best_judge = serializers.JSONField()
    imported = serializers.JSONField()
    validation_plan = serializers.DictField(
        help_text=(
            "How large the validation must be: items per annotator (3, 4, 5 annotators) for the alt-test at the "
            "chosen ε to pass with probability 0.8 for a judge of the given accuracy (simulated), and items for "
            "κ's 95 % interval to reach the given half-width (asymptotic), with their inputs and assumptions."
        )
    )
    planner = serializers.DictField(
        help_text=(
            "Human-labelled turns a judge-corrected contrast needs per side and per stratum for the target "
            "half-width, per metric and judge, from the judge's error SD on these labels (λ = 1, so conservative; "
            "sides independent; Kish's design effect from the recorded inclusion probabilities)."
        )
    )


class PersonaResultSerializer(serializers.Serializer):
    hide_persona_cue = serializers.BooleanField()
    items_updated = serializers.IntegerField()


# "import" is a Python keyword, so this body is declared from a dict of fields.
MRBenchImportResultSerializer = inline_serializer(
    name="MRBenchImportResult",
    fields={
        "project": serializers.IntegerField(),
        "items": serializers.IntegerField(),
        "import": serializers.DictField(help_text="What the import read and kept, with its counts."),
        "warnings": serializers.ListField(child=serializers.CharField()),
        "options": serializers.DictField(),
    },
)


class AuditJudgeStatusSerializer(serializers.Serializer):
    validated = serializers.BooleanField()
    verdict_rule = VerdictRuleSerializer(help_text="The rule the verdicts follow (?rule=; default interval).")
    text = serializers.CharField()
    rubric = serializers.CharField(allow_null=True)
    recorded_at = serializers.CharField(
        allow_blank=True, help_text="The day the validation was recorded (YYYY-MM-DD); empty when there is none."
    )
    n_turns = serializers.IntegerField(allow_null=True)
    verdicts = serializers.JSONField()
    failed_metrics = serializers.ListField(child=serializers.CharField())
    validation = serializers.IntegerField(allow_null=True)
    project = serializers.IntegerField(allow_null=True)
