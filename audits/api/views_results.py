"""API of the fairness results (researchers only): every table as JSON, the exports and the judge-corrected table.

The paths: `GET /api/audits/{id}/results/` (every table as JSON, under the query's parameters), `POST` to the same path
(compute a failed analysis again) and `GET /api/audits/{id}/export/?format=csv|parquet|methods|json|html` (the same
files the results page offers) and `GET /api/audits/{id}/results/judge-corrected/` (the judge-only flags beside the
PPI++ differences corrected with the human labels of the audit's judge-validation project).

The analysis runs on a Celery worker: until it is done both GETs answer 202 with its progress
({status, cells_done, cells_total, retry_after, error}) and a Retry-After header — the request starts the
computation if nothing has — and 500 with the error when it failed."""

from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from audits import exports
from audits.api.serializers_judge_corrected import JudgeCorrectedSerializer
from audits.api.serializers_results import (
    AnalysisParametersSerializer,
    AnalysisProgressSerializer,
    ExportQuerySerializer,
    ResultsSerializer,
)
from audits.fairness import AnalysisParameters
from audits.http_exports import analysis_state_response, export_response
from audits.models import Audit
from audits.services.analysis import AnalysisState, analysis_parameters_from, analysis_request, analysis_retry
from audits.services.judge_corrected import judge_corrected_results
from edufair_web.accounts.permissions import IsResearcher


def _parameters(query) -> AnalysisParameters:
    serializer = AnalysisParametersSerializer(
        data={k: v for k, v in query.items() if k in AnalysisParametersSerializer().fields}
    )
    serializer.is_valid(raise_exception=True)
    return analysis_parameters_from(serializer.validated_data)


RETRY_AFTER_HEADER = OpenApiParameter(
    "Retry-After",
    type=int,
    location=OpenApiParameter.HEADER,
    response=[202],
    description="Seconds to wait before asking again.",
)
COMPUTING = OpenApiResponse(
    AnalysisProgressSerializer,
    description="The analysis is queued or running on a worker (this request started it if nothing had): "
    "its progress. Ask again after Retry-After seconds.",
)
FAILED = OpenApiResponse(
    AnalysisProgressSerializer,
    description="The computation failed: `error` says why. POST /api/audits/{id}/results/ computes it again.",
)


def _state_response(state: AnalysisState) -> Response:
    code = {"done": status.HTTP_200_OK, "failed": status.HTTP_500_INTERNAL_SERVER_ERROR}.get(
        state.status, status.HTTP_202_ACCEPTED
    )
    headers = {} if code == status.HTTP_500_INTERNAL_SERVER_ERROR else {"Retry-After": str(state.retry_after)}
    return Response(state.as_dict(), status=code, headers=headers)


class AuditResultsAPIView(APIView):
    permission_classes = [IsResearcher]

    @extend_schema(
        parameters=[AnalysisParametersSerializer, RETRY_AFTER_HEADER],
        responses={200: ResultsSerializer, 202: COMPUTING, 500: FAILED},
    )
    def get(self, request, pk: int):
        audit = get_object_or_404(Audit, pk=pk)
        found = analysis_request(audit=audit, parameters=_parameters(request.query_params))
        if isinstance(found, AnalysisState):
            return _state_response(found)
        return Response(exports.results_payload(found))

    @extend_schema(
        request=None,
        parameters=[AnalysisParametersSerializer, RETRY_AFTER_HEADER],
        responses={
            202: COMPUTING,
            200: OpenApiResponse(AnalysisProgressSerializer, description="Already done: GET the results."),
        },
        description="Compute the analysis again if it failed (otherwise: start it if nothing has); its progress.",
    )
    def post(self, request, pk: int):
        audit = get_object_or_404(Audit, pk=pk)
        return _state_response(analysis_retry(audit=audit, parameters=_parameters(request.query_params)))


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
        parameters=[ExportQuerySerializer, RETRY_AFTER_HEADER],
        responses={
            (200, "text/csv"): OpenApiResponse(OpenApiTypes.BINARY, description="CSV file"),
            (200, "application/vnd.apache.parquet"): OpenApiResponse(OpenApiTypes.BINARY, description="Parquet file"),
            (200, "text/html"): OpenApiResponse(OpenApiTypes.BINARY, description="Self-contained HTML report"),
            (200, "application/json"): OpenApiResponse(OpenApiTypes.OBJECT, description="JSON results"),
            (202, "application/json"): COMPUTING,
            (500, "application/json"): FAILED,
        },
    )
    def get(self, request, pk: int):
        audit = get_object_or_404(Audit, pk=pk)
        query = ExportQuerySerializer(data={k: v for k, v in request.query_params.items()})
        query.is_valid(raise_exception=True)
        data = query.validated_data
        found = analysis_request(audit=audit, parameters=analysis_parameters_from(data))
        fmt, table = data["format"], data["table"]
        if isinstance(found, AnalysisState):
            return analysis_state_response(found)
        return export_response(found, fmt, table)


class AuditJudgeCorrectedAPIView(APIView):
    permission_classes = [IsResearcher]

    @extend_schema(
        parameters=[AnalysisParametersSerializer, RETRY_AFTER_HEADER],
        responses={200: JudgeCorrectedSerializer, 202: COMPUTING, 500: FAILED},
        description="The judge-only flags of the audit's analysis (under the query's parameters) beside the PPI++ "
        "differences corrected with the human labels of its judge-validation project, with the judge's cue check "
        "per cell; no cell (validation null) when the audit has no validation project.",
    )
    def get(self, request, pk: int):
        audit = get_object_or_404(Audit, pk=pk)
        found = analysis_request(audit=audit, parameters=_parameters(request.query_params))
        if isinstance(found, AnalysisState):
            return _state_response(found)
        return Response(exports.judge_corrected_payload(found, judge_corrected_results(audit, analysis=found)))
