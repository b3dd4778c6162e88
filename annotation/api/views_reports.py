"""API views for a project's report, a stage's dashboard and aggregation by annotator quality, and the label exports.

These are what researchers read about a project; the report is its Appendix-D paper trail.
"""

from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation import reports
from annotation.models import AnnotationProject, Stage
from annotation.selectors import exports
from annotation.selectors.crowd_aggregation import stage_aggregation
from annotation.selectors.stage_dashboard import stage_dashboard
from edufair_web.accounts.permissions import IsResearcher
from edufair_web.api_parameters import choice_parameter, query_choice

from .serializers_reports import ReportSerializer, StageAggregationSerializer, StageDashboardSerializer


class ReportAPIView(APIView):
    """The project's Appendix-D report as JSON (the same data as the HTML and Markdown versions)."""

    permission_classes = [IsResearcher]

    @extend_schema(responses=ReportSerializer)
    def get(self, request, project_pk):
        project = get_object_or_404(AnnotationProject, pk=project_pk)
        return Response(reports.report_json_ready(reports.project_report(project)))


class StageDashboardAPIView(APIView):
    """A stage's progress while it runs: items complete / in progress / waiting, labels per annotator with
    median seconds, running Fleiss κ and Krippendorff α before discussion, disagreement and adjudication
    rates, revised labels, reservations held (researchers)."""

    permission_classes = [IsResearcher]

    @extend_schema(responses=StageDashboardSerializer)
    def get(self, request, stage_pk):
        return Response(stage_dashboard(get_object_or_404(Stage.objects.select_related("project"), pk=stage_pk)))


class StageAggregationAPIView(APIView):
    """A stage's labels aggregated by annotator quality, per question: majority vote, Dawid–Skene, GLAD and MACE
    (crowd-kit), each with every annotator's competence by pseudonym, its agreement with the adjudicated finals and
    gold, and every item's label, posterior and soft label (researchers)."""

    permission_classes = [IsResearcher]

    @extend_schema(responses=StageAggregationSerializer)
    def get(self, request, stage_pk):
        stage = get_object_or_404(Stage.objects.select_related("project"), pk=stage_pk)
        return Response(stage_aggregation(stage, items=True))


class LabelsExportAPIView(APIView):
    """All labels with provenance: ?as=csv | jsonl | labelstudio[-anonymous|-config] (not ?format=, kept by DRF); or
    every item's soft labels under every aggregation method: ?as=soft-csv | soft-jsonl | soft-parquet."""

    permission_classes = [IsResearcher]

    @extend_schema(
        parameters=[choice_parameter("as", exports.FORMATS, "The export format (default: jsonl).")],
        responses={
            (200, "text/csv"): OpenApiTypes.STR,
            (200, "application/x-ndjson"): OpenApiTypes.STR,
            (200, "application/json"): OpenApiTypes.OBJECT,
            (200, "application/vnd.apache.parquet"): OpenApiTypes.BINARY,
        },
    )
    def get(self, request, project_pk):
        project = get_object_or_404(AnnotationProject, pk=project_pk)
        fmt = query_choice(request.query_params, "as", exports.FORMATS) or "jsonl"
        body, content_type, filename = exports.export_labels(project, fmt)
        response = HttpResponse(body, content_type=content_type)
        response["Content-Disposition"] = f'attachment; filename="{filename}"'
        return response
