"""API of the fairness results (researchers only): `GET /api/audits/{id}/results/` (every table as JSON,
under the query's parameters) and `GET /api/audits/{id}/export/?format=csv|json|html` (the same files
the results page offers)."""

from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from audits import exports
from audits.api.serializers_results import AnalysisParametersSerializer, ExportQuerySerializer, ResultsSerializer
from audits.fairness import AnalysisParameters
from audits.models import Audit
from audits.services.analysis import audit_analysis
from audits.views.results import export_response
from edufair_web.accounts.permissions import IsResearcher


def _parameters(query) -> AnalysisParameters:
    serializer = AnalysisParametersSerializer(
        data={k: v for k, v in query.items() if k in AnalysisParametersSerializer().fields}
    )
    serializer.is_valid(raise_exception=True)
    return AnalysisParameters(**serializer.validated_data)


class AuditResultsAPIView(APIView):
    permission_classes = [IsResearcher]

    @extend_schema(parameters=[AnalysisParametersSerializer], responses={200: ResultsSerializer})
    def get(self, request, pk: int):
        audit = get_object_or_404(Audit, pk=pk)
        analysis = audit_analysis(audit=audit, parameters=_parameters(request.query_params))
        return Response(exports.results_payload(analysis))


class _IgnoreFormatNegotiation(BaseContentNegotiation):
    """`?format=` chooses the export here, not a DRF renderer; the view returns a plain file response."""

    def select_parser(self, request, parsers):
        return parsers[0] if parsers else None

    def select_renderer(self, request, renderers, format_suffix=None):
        return renderers[0], renderers[0].media_type


class AuditExportAPIView(APIView):
    permission_classes = [IsResearcher]
    renderer_classes = [JSONRenderer]  # errors only; exports are plain HTTP responses
    content_negotiation_class = _IgnoreFormatNegotiation

    @extend_schema(
        parameters=[ExportQuerySerializer],
        responses={
            (200, "text/csv"): OpenApiResponse(OpenApiTypes.BINARY, description="CSV file"),
            (200, "text/html"): OpenApiResponse(OpenApiTypes.BINARY, description="Self-contained HTML report"),
            (200, "application/json"): OpenApiResponse(OpenApiTypes.OBJECT, description="JSON results"),
        },
    )
    def get(self, request, pk: int):
        audit = get_object_or_404(Audit, pk=pk)
        query = ExportQuerySerializer(data={k: v for k, v in request.query_params.items()})
        query.is_valid(raise_exception=True)
        data = dict(query.validated_data)
        fmt, table = data.pop("format"), data.pop("table")
        analysis = audit_analysis(audit=audit, parameters=AnalysisParameters(**data))
        return export_response(analysis, fmt, table)
