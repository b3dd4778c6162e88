"""Serializers of the judge-corrected API, for the OpenAPI schema.

They describe the body `audits.exports.judge_corrected_payload` builds: the validation project behind it, the
estimator in words, and one flat row per corrected cell."""

from rest_framework import serializers

from audits.judge_corrected_table import DISAGREEMENT_BADGES


class HumanSubsetFactsSerializer(serializers.Serializer):
    project_id = serializers.IntegerField(help_text="The judge-validation project whose settled labels are used.")
    project_name = serializers.CharField()
    rubric = serializers.CharField(help_text="The validation's rubric version.")
    labelled_items = serializers.IntegerField(help_text="Items with a settled human consensus.")
    updated_at = serializers.DateTimeField(allow_null=True, help_text="The newest consensus.")


class CorrectedCellSerializer(serializers.Serializer):
    tutor_id = serializers.IntegerField()
    tutor = serializers.CharField(help_text="The tutor endpoint's name.")
    domain = serializers.CharField()
    kind = serializers.CharField()
    family = serializers.CharField()
    dimension = serializers.CharField()
    level_a = serializers.CharField()
    level_b = serializers.CharField()
    metric = serializers.CharField()
    disagreement = serializers.ChoiceField(
        choices=["", *DISAGREEMENT_BADGES],
        help_text="'unsupported': the judge-only analysis flags the cell but the corrected interval covers 0; "
        "'hidden': it does not flag it but the corrected interval excludes 0; empty when they agree or when "
        "the cell cannot be read (judge_only_insufficient, human_labels_constant).",
    )
    badge = serializers.CharField(help_text="The disagreement in words, or empty.")
    reason = serializers.CharField(help_text="The judge-only reading against the corrected interval, in words.")
    judge_only_flag = serializers.BooleanField(help_text="The analysis's violation flag for the cell.")
    judge_only_insufficient = serializers.BooleanField(
        help_text="The analysis had too few question pairs to flag the cell: no disagreement is read."
    )
    human_labels_constant = serializers.CharField(
        help_text="Sides (A, B) whose human labels are all one value: the corrected interval's width is not "
        "estimable from them and no disagreement is read; empty otherwise."
    )
    judge_only_estimate = serializers.FloatField(allow_null=True, help_text="Mean judge score per turn, B − A.")
    judge_only_se = serializers.FloatField(allow_null=True)
    judge_only_ci_low = serializers.FloatField(allow_null=True)
    judge_only_ci_high = serializers.FloatField(allow_null=True)
    corrected_estimate = serializers.FloatField(allow_null=True, help_text="PPI++ difference B − A.")
    corrected_se = serializers.FloatField(allow_null=True)
    corrected_ci_low = serializers.FloatField(allow_null=True)
    corrected_ci_high = serializers.FloatField(allow_null=True)
    corrected_excludes_zero = serializers.BooleanField()
    alpha = serializers.FloatField(help_text="The intervals are at level 1 − alpha.")
    n_turns_a = serializers.IntegerField(help_text="Judge-scored tutor turns on side A.")
    n_turns_b = serializers.IntegerField()
    n_labelled_a = serializers.IntegerField(help_text="Human-labelled turns on side A.")
    n_labelled_b = serializers.IntegerField()
    estimate_a = serializers.FloatField(allow_null=True, help_text="Side A's PPI++ mean.")
    estimate_b = serializers.FloatField(allow_null=True)
    lambda_a = serializers.FloatField(help_text="Side A's power-tuned λ in [0, 1].")
    lambda_b = serializers.FloatField()
    cue_mean_error_a = serializers.FloatField(allow_null=True, help_text="Mean judge − human on A's labelled turns.")
    cue_mean_error_b = serializers.FloatField(allow_null=True)
    cue_difference = serializers.FloatField(allow_null=True, help_text="cue_mean_error_b − cue_mean_error_a.")
    cue_p = serializers.FloatField(allow_null=True, help_text="Welch's t-test p of the difference.")
    cue_sensitive = serializers.BooleanField(help_text="cue_p < alpha: the judge errs differently on the sides.")
    simulation = serializers.BooleanField()


class JudgeCorrectedSerializer(serializers.Serializer):
    audit = serializers.DictField(help_text="id, name, status.")
    simulation = serializers.BooleanField(help_text="True when any model of the audit is a simulation.")
    label = serializers.CharField(help_text="The SIMULATION label, or empty.")
    parameters = serializers.DictField(help_text="The analysis parameters the judge-only flags come from.")
    alpha = serializers.FloatField()
    methods = serializers.CharField(help_text="The estimator in words.")
    validation = HumanSubsetFactsSerializer(
        allow_null=True, help_text="The judge-validation project the labels come from; null when there is none."
    )
    skipped = serializers.IntegerField(help_text="Cells with fewer than 2 human-labelled turns on a side.")
    disagreeing = serializers.IntegerField(
        help_text="Cells whose corrected reading disagrees with the judge-only flag."
    )
    cue_sensitive_metrics = serializers.ListField(child=serializers.CharField())
    columns = serializers.ListField(child=serializers.CharField(), help_text="The CSV export's columns, in order.")
    cells = CorrectedCellSerializer(many=True, help_text="Disagreeing cells first, then by |corrected difference|.")
