"""Serializers of the fairness results API: the query parameters it accepts and the bodies it returns.

The bodies are described for the OpenAPI schema: results built by audits.exports.results_payload, and the progress of an
analysis a worker is computing, from audits.services.analysis.AnalysisState."""

from rest_framework import serializers

from audits.exports import TABLES
from audits.models import AnalysisResult
from audits.violation_rules import DEFAULT_RULE, DEFAULT_THRESHOLD, RULES


class AnalysisParametersSerializer(serializers.Serializer):
    effect = serializers.ChoiceField(choices=["r", "rank_biserial"], default="r")
    zero_method = serializers.ChoiceField(choices=["pratt", "wilcox", "zsplit"], default="pratt")
    n_boot = serializers.IntegerField(min_value=0, max_value=20000, default=2000)
    threshold = serializers.FloatField(min_value=0, max_value=1, default=DEFAULT_THRESHOLD)
    seed = serializers.IntegerField(min_value=0, max_value=2**31 - 1, default=0)
    min_pairs = serializers.IntegerField(min_value=2, max_value=100000, default=15)
    rule = serializers.ChoiceField(
        choices=list(RULES),
        default=DEFAULT_RULE,
        help_text="Violation rule: 'calibrated' (default; the paper's conditions and the signed-rank p < alpha) "
        "or 'paper' (EduFair-Bench's: n >= min_pairs, CI excludes 0, |r| >= threshold).",
    )
    alpha = serializers.FloatField(min_value=0.0001, max_value=0.5, default=0.05)
    fdr_q = serializers.FloatField(
        min_value=0.0001, max_value=0.5, default=0.05, help_text="Benjamini–Hochberg level of violation_bh."
    )


class ExportQuerySerializer(AnalysisParametersSerializer):
    format = serializers.ChoiceField(choices=["csv", "methods", "json", "html"], default="csv")
    table = serializers.ChoiceField(choices=list(TABLES), default="contrasts", help_text="CSV only.")


class ResultsSerializer(serializers.Serializer):
    audit = serializers.DictField()
    simulation = serializers.BooleanField(help_text="True when any model of the audit is a simulation.")
    label = serializers.CharField(help_text="The SIMULATION label, or empty.")
    findings = serializers.DictField(
        help_text="What this audit found (audits.findings): per tutor, the contrast rows flagged under the rule in "
        "force (largest first, those surviving BH marked bh), each with its direction in words, r and CI; and "
        "'exceeds |r| >= threshold in k of N domain × dimension cells' counted from flagged cells (cells_flagged, "
        "cells_flagged_bh, cells_total). Its counts are the violation rows of tables.contrasts."
    )
    parameters = serializers.DictField()
    methods = serializers.DictField(help_text="Every parameter, the judge, rubric version and validation status.")
    tutors = serializers.DictField(child=serializers.CharField())
    from_cache = serializers.BooleanField()
    tables = serializers.DictField(
        child=serializers.ListField(child=serializers.DictField()),
        help_text="contrasts, conversation_contrasts, student_contrasts (the simulator check), dimension_cells, "
        "cells_over_threshold, metric_by_tutor, implicit_rows, opposite_decomposition (NaN as null; floats in full "
        "precision). Each contrast row names its rule and carries violation, violation_bh, p_exact (empty "
        "above 100 non-zero differences), p_normal, p_adjusted, p_method, mean_diff with "
        "its CI, simulator_driven and the counts behind it (dialogues_*, turns_*, pairs_used).",
    )


class AnalysisProgressSerializer(serializers.Serializer):
    """The body of a 202 (queued or running), or of a 500 (failed), while the results are not ready."""

    status = serializers.ChoiceField(choices=AnalysisResult.Status.choices)
    cells_done = serializers.IntegerField(help_text="Contrast × metric cells computed so far.")
    cells_total = serializers.IntegerField(help_text="All cells of the analysis; 0 until the worker knows.")
    retry_after = serializers.IntegerField(help_text="Seconds to wait before asking again (also a Retry-After header).")
    error = serializers.CharField(help_text="Why the computation failed; empty unless status is failed.")
