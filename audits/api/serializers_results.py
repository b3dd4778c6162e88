"""Serializers of the fairness results API: the query parameters it accepts and the bodies it returns.

The bodies are described for the OpenAPI schema: results built by audits.exports.results_payload, and the progress of an
analysis a worker is computing, from audits.services.analysis.AnalysisState."""

from rest_framework import serializers

from audits.analysis_parameters import DoorParameter, door_parameters
from audits.exports import TABLES
from audits.models import AnalysisResult


def parameter_serializer_field(parameter: DoorParameter) -> serializers.Field:
    """The API's field of one analysis parameter, from its spec."""
    spec = parameter.spec
    help_text = f"{spec.label}. {spec.help}" if spec.help else spec.label
    if spec.choices:
        return serializers.ChoiceField(choices=list(spec.choices), default=parameter.default, help_text=help_text)
    field_class = serializers.IntegerField if parameter.kind is int else serializers.FloatField
    return field_class(min_value=spec.minimum, max_value=spec.maximum, default=parameter.default, help_text=help_text)


AnalysisParametersSerializer = type(
    "AnalysisParametersSerializer",
    (serializers.Serializer,),
    {
        "__module__": __name__,
        "__doc__": "The analysis parameters of a results query: every door's, with the spec's defaults and bounds.",
        **{parameter.name: parameter_serializer_field(parameter) for parameter in door_parameters()},
    },
)


class ExportQuerySerializer(AnalysisParametersSerializer):
    format = serializers.ChoiceField(choices=["csv", "parquet", "methods", "json", "html"], default="csv")
    table = serializers.ChoiceField(choices=list(TABLES), default="contrasts", help_text="CSV and Parquet only.")


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
        "metric_by_tutor, implicit_rows, opposite_decomposition (NaN as null; floats in full "
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
