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


# --- The report's layers, typed for the schema (keys may be absent where a value is undefined) ----------------


def _number(help_text: str = "") -> serializers.FloatField:
    return serializers.FloatField(required=False, allow_null=True, help_text=help_text)


def _integer(help_text: str = "") -> serializers.IntegerField:
    return serializers.IntegerField(required=False, allow_null=True, help_text=help_text)


def _text(help_text: str = "") -> serializers.CharField:
    return serializers.CharField(required=False, allow_blank=True, allow_null=True, help_text=help_text)


class JvUnitsSerializer(serializers.Serializer):
    """What a coefficient counts."""

    items_rated = _integer()
    items_pairable = _integer("Items with two or more ratings.")
    pairable_values = _integer("The ratings in those items (α's n).")


class JvCoefficientSerializer(serializers.Serializer):
    """A coefficient's point value (`undefined_reason` says why it is null); κ's also with its interval."""

    statistic = _text()
    value = _number()
    n_units = _integer()
    undefined_reason = _text()
    coverage = serializers.JSONField(required=False, allow_null=True)
    units = JvUnitsSerializer(required=False)
    ci_low = _number()
    ci_high = _number()
    ci_level = _number()
    resamples = _integer()
    seed = _integer()


class JvIntervalSerializer(serializers.Serializer):
    """A coefficient with its percentile bootstrap interval over items (α also with P(α < minimum))."""

    statistic = _text()
    estimate = _number()
    low = _number()
    high = _number()
    confidence = _number()
    n_boot = _integer("Valid resamples.")
    method = _text()
    units = JvUnitsSerializer(required=False)
    undefined_reason = _text()
    p_below = serializers.DictField(
        child=serializers.FloatField(allow_null=True),
        required=False,
        help_text="α only: minimum (0.667, 0.8) → the share of resampled α below it.",
    )


class JvCeilingAnnotatorSerializer(serializers.Serializer):
    annotator = serializers.CharField(help_text="Pseudonym.")
    kappa_vs_others = JvCoefficientSerializer(help_text="Cohen's κ (linear) against the others' majority value.")
    n_items = serializers.IntegerField()
    alpha_without = JvCoefficientSerializer(help_text="The panel's α without this annotator.")


class JvHumanCeilingSerializer(serializers.Serializer):
    human_alpha = JvIntervalSerializer()
    per_annotator = JvCeilingAnnotatorSerializer(many=True)


class JvAltTestAnnotatorSerializer(serializers.Serializer):
    annotator = serializers.CharField(help_text="Pseudonym.")
    n_items = serializers.IntegerField()
    judge_align = serializers.FloatField()
    human_align = serializers.FloatField()
    advantage = serializers.FloatField(help_text="ρ_j: the share of items where the judge aligns at least as well.")
    p_value = serializers.FloatField(help_text="One-sided p of the test with margin ε.")
    p_adjusted = serializers.FloatField(help_text="p adjusted by Benjamini–Yekutieli across the annotators.")
    rejected = serializers.BooleanField(help_text="The judge may replace this annotator.")


class JvAltTestSerializer(serializers.Serializer):
    omega = _number("ω: the share of annotators the judge may replace; null when none could be tested.")
    rho = _number("ρ: the judge's mean advantage; ranks judges.")
    passed = serializers.BooleanField(help_text="ω ≥ 0.5 and every requirement met.")
    epsilon = serializers.FloatField()
    epsilon_text = _text()
    alpha = serializers.FloatField(help_text="The level of the BY-adjusted tests.")
    per_annotator = JvAltTestAnnotatorSerializer(many=True)
    unmet = serializers.ListField(child=serializers.CharField(), help_text="The requirements not met, in words.")


class JvJudgeVersusHumansSerializer(serializers.Serializer):
    kappa_linear = JvCoefficientSerializer()
    kappa_unweighted = JvCoefficientSerializer()
    ac1 = JvIntervalSerializer()
    ac2_linear = JvIntervalSerializer()
    class_shares = serializers.DictField(child=serializers.FloatField(), help_text="Class → its share of the ratings.")
    prevalence_margin = serializers.FloatField()
    prevalence_warning = serializers.CharField(allow_blank=True, help_text="Empty unless κ and AC1 differ by more.")
    alt_test = JvAltTestSerializer()


class JvDifferenceSerializer(serializers.Serializer):
    """Mean (judge − human) with its interval, overall or in one stratum."""

    stratum = _text()
    estimate = _number()
    low = _number()
    high = _number()
    confidence = _number()
    n = _integer()
    n_boot = _integer()
    units = _text()
    undefined_reason = _text()


class JvRankGroupSerializer(serializers.Serializer):
    group = serializers.CharField()
    judge_mean = _number()
    human_mean = _number()


class JvRankAgreementSerializer(serializers.Serializer):
    """Kendall's τ-b between the groups' mean judge and mean human scores, with its interval."""

    grouping = _text()
    statistic = _text()
    estimate = _number()
    low = _number()
    high = _number()
    confidence = _number()
    n_groups = _integer()
    n = _integer()
    n_boot = _integer()
    groups = JvRankGroupSerializer(many=True, required=False)
    units = _text()
    undefined_reason = _text()


class JvDirectionSerializer(serializers.Serializer):
    mean_difference = JvDifferenceSerializer()
    by_stratum = serializers.DictField(
        child=JvDifferenceSerializer(many=True), help_text="tutor / condition → per stratum."
    )
    rank_agreement = serializers.DictField(child=JvRankAgreementSerializer(), help_text="tutor / condition → τ.")


class JvJudgeLayersSerializer(serializers.Serializer):
    judge_vs_humans = JvJudgeVersusHumansSerializer()
    direction = JvDirectionSerializer()


class JvJudgeRhoSerializer(serializers.Serializer):
    judge = serializers.CharField()
    rho = _number()


class JvLayersSerializer(serializers.Serializer):
    human_ceiling = JvHumanCeilingSerializer(help_text="(a) How well the humans agree.")
    judges = serializers.DictField(
        child=JvJudgeLayersSerializer(), help_text="Judge key → (b) the judge against the humans, (c) its direction."
    )
    judges_by_rho = JvJudgeRhoSerializer(many=True)
    epsilon = serializers.FloatField()
    epsilon_text = _text()


class JvVerdictIntervalSerializer(serializers.Serializer):
    low = _number()
    high = _number()
    level = _number()


class JvVerdictConditionSerializer(serializers.Serializer):
    condition = serializers.CharField()
    met = serializers.BooleanField(allow_null=True)
    text = serializers.CharField()


class JvVerdictSerializer(serializers.Serializer):
    rule = serializers.CharField(help_text="The rule this verdict follows (one of verdict_rules' names).")
    rule_text = _text()
    n = _integer()
    interval = JvVerdictIntervalSerializer(required=False)
    kappa = _text()
    outcome = serializers.CharField(help_text="pass, fail or undecided.")
    reasons = serializers.ListField(child=serializers.CharField())
    conditions = JvVerdictConditionSerializer(many=True)


class JvJudgeSectionSerializer(serializers.Serializer):
    n_compared = _integer()
    n_scored = _integer()
    exact_agreement = _number()
    within_one = _number()
    kappa_linear = JvCoefficientSerializer()
    applicability_mismatch = _number()
    alpha_with_judge = JvCoefficientSerializer(required=False, allow_null=True)
    confusion = serializers.DictField(required=False)
    largest_differences = serializers.ListField(child=serializers.DictField(), required=False)
    verdict = JvVerdictSerializer()
    verdict_by_rule = serializers.DictField(child=serializers.CharField(), help_text="Rule → outcome.")


class JvMetricSerializer(serializers.Serializer):
    metric = serializers.CharField()
    scale = serializers.ListField(child=serializers.CharField())
    n_items_labelled = _integer()
    n_consensus = _integer()
    human_alpha_pre = JvCoefficientSerializer()
    human_alpha_post = JvCoefficientSerializer()
    judges = serializers.DictField(child=JvJudgeSectionSerializer(), help_text="Judge key → κ and the verdict.")
    label_stage = _integer()
    layers = JvLayersSerializer(required=False, help_text="The three validity layers; absent without a judge.")


class JvAltTestChoiceSerializer(serializers.Serializer):
    epsilon = serializers.FloatField()
    epsilon_text = _text()
    epsilon_defaults = serializers.DictField(child=serializers.CharField(), help_text="ε → its meaning.")


class JvPlanInputsSerializer(serializers.Serializer):
    judge_accuracy = _number()
    annotator_accuracy = _number()
    kappa = _number()
    prevalence = _number()
    kappa_half_width = _number()


class JvPlanAltTestSerializer(serializers.Serializer):
    n_annotators = serializers.IntegerField()
    items_per_annotator = _integer("Null: more than the largest size tried.")
    pass_rate = serializers.DictField(child=serializers.FloatField(), help_text="Items per annotator → pass rate.")
    assumptions = _text()


class JvValidationPlanSerializer(serializers.Serializer):
    inputs = JvPlanInputsSerializer()
    epsilon = serializers.FloatField()
    target = serializers.FloatField(help_text="The pass probability aimed at.")
    alt_test = JvPlanAltTestSerializer(many=True)
    kappa_items = _integer("Items for κ's 95 % interval to reach the half-width.")
    kappa_note = _text()
    kappa_assumptions = _text()


class ValidationReportSerializer(serializers.Serializer):
    project = serializers.DictField()
    rubric = serializers.DictField()
    thresholds = serializers.DictField()
    verdict_rule = VerdictRuleSerializer(help_text="The rule every verdict of this response follows.")
    verdict_rules = VerdictRuleSerializer(many=True, help_text="Every rule that can be chosen with ?rule=.")
    alt_test = JvAltTestChoiceSerializer(
        help_text="The alt-test's ε (?epsilon=) with its meaning, and the defaults' meanings (0.2 experts, 0.1 crowd)."
    )
    n_sample = serializers.IntegerField()
    consensus_source = serializers.CharField()
    judges = serializers.ListField(child=serializers.DictField())
    metrics = serializers.ListField(
        child=JvMetricSerializer(),
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
    validation_plan = JvValidationPlanSerializer(
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
