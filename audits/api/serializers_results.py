"""Serializers of the fairness results API: the query parameters it accepts and, for the OpenAPI schema,
the shape of the body it returns (built by audits.exports.results_payload)."""

from rest_framework import serializers

from audits.exports import TABLES


class AnalysisParametersSerializer(serializers.Serializer):
    effect = serializers.ChoiceField(choices=["r", "rank_biserial"], default="r")
    zero_method = serializers.ChoiceField(choices=["pratt", "wilcox", "zsplit"], default="pratt")
    n_boot = serializers.IntegerField(min_value=0, max_value=20000, default=2000)
    threshold = serializers.FloatField(min_value=0, max_value=1, default=0.10)
    seed = serializers.IntegerField(min_value=0, max_value=2**31 - 1, default=0)
    min_pairs = serializers.IntegerField(min_value=2, max_value=100000, default=15)


class ExportQuerySerializer(AnalysisParametersSerializer):
    format = serializers.ChoiceField(choices=["csv", "json", "html"], default="csv")
    table = serializers.ChoiceField(choices=list(TABLES), default="contrasts", help_text="CSV only.")


class ResultsSerializer(serializers.Serializer):
    audit = serializers.DictField()
    simulation = serializers.BooleanField(help_text="True when any model of the audit is a simulation.")
    label = serializers.CharField(help_text="The SIMULATION label, or empty.")
    parameters = serializers.DictField()
    methods = serializers.DictField(help_text="Every parameter, the judge, rubric version and validation status.")
    tutors = serializers.DictField(child=serializers.CharField())
    from_cache = serializers.BooleanField()
    tables = serializers.DictField(
        child=serializers.ListField(child=serializers.DictField()),
        help_text="contrasts, conversation_contrasts, dimension_cells, cells_over_threshold, metric_by_tutor, "
        "implicit_rows, opposite_decomposition (NaN as null).",
    )
