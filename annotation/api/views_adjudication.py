"""API views for adjudicators: the reviewer queue, item discussions and one item's labels with decisions.

The item discussions are adjudication threads; an item's labels stand side by side with the reviewer's decisions on its
open questions.
"""

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.models import AnnotationProject, Item, Stage
from annotation.selectors.adjudication import adjudication_queue, adjudication_threads, queue_thread_ids
from annotation.services import adjudication as adjudication_services
from annotation.services.resolution import ResolutionRefused
from edufair_web.accounts.permissions import IsAdjudicator
from edufair_web.api_parameters import PROJECT_FILTER, STAGE_FILTER
from edufair_web.converters import query_id

from .item_detail import item_detail
from .serializers_labelling import (
    ItemDetailSerializer,
    QueueRowSerializer,
    ReviewerDecisionSerializer,
    ThreadRowSerializer,
)


def _project_stage_filters(request) -> dict:
    """?project= and ?stage= as objects (400 for a malformed id, 404 for an unknown one)."""
    found = {}
    project_id = query_id(request.query_params, "project")
    stage_id = query_id(request.query_params, "stage")
    if project_id is not None:
        found["project"] = get_object_or_404(AnnotationProject, pk=project_id)
    if stage_id is not None:
        found["stage"] = get_object_or_404(Stage, pk=stage_id)
    return found


PROJECT_STAGE_PARAMETERS = [PROJECT_FILTER, STAGE_FILTER]


class AdjudicationQueueAPIView(APIView):
    """Items waiting for a discussion to end or for a reviewer, oldest first (filter by project or stage)."""

    permission_classes = [IsAdjudicator]

    @extend_schema(
        parameters=PROJECT_STAGE_PARAMETERS,
        responses=QueueRowSerializer(many=True),
        operation_id="annotation_adjudication_queue",
    )
    def get(self, request):
        rows = list(adjudication_queue(**_project_stage_filters(request)))
        by_pair = queue_thread_ids(rows)
        return Response(
            [
                {
                    "project": row.stage.project_id,
                    "stage": row.stage_id,
                    "item": row.item_id,
                    "external_id": row.item.external_id,
                    "status": row.status,
                    "thread": by_pair.get((row.stage_id, row.item_id)),
                }
                for row in rows
            ]
        )


class AdjudicationThreadsAPIView(APIView):
    """Every item discussion (adjudication thread), oldest first: filter by project, stage, ?open=true|false.
    A thread's comments: /api/annotation/threads/{id}/comments/."""

    permission_classes = [IsAdjudicator]

    @extend_schema(
        parameters=[
            *PROJECT_STAGE_PARAMETERS,
            OpenApiParameter("open", bool, description="true: open discussions only; false: closed ones only."),
        ],
        responses=ThreadRowSerializer(many=True),
    )
    def get(self, request):
        raw = request.query_params.get("open", "")
        if raw not in ("", "true", "false"):
            raise ValidationError({"open": "true or false"})
        is_open = None if raw == "" else raw == "true"
        return Response(adjudication_threads(**_project_stage_filters(request), is_open=is_open))


class AdjudicationItemAPIView(APIView):
    """One item's labels side by side (GET), and the reviewer's decisions on its open questions (POST)."""

    permission_classes = [IsAdjudicator]

    @extend_schema(responses=ItemDetailSerializer)
    def get(self, request, stage_pk, item_pk):
        stage = get_object_or_404(Stage, pk=stage_pk)
        item = get_object_or_404(Item, pk=item_pk, project_id=stage.project_id)
        return Response(item_detail(request, stage, item))

    @extend_schema(request=ReviewerDecisionSerializer, responses=ItemDetailSerializer)
    def post(self, request, stage_pk, item_pk):
        stage = get_object_or_404(Stage, pk=stage_pk)
        item = get_object_or_404(Item, pk=item_pk, project_id=stage.project_id)
        serializer = ReviewerDecisionSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            adjudication_services.adjudication_decide(
                stage=stage, item=item, by=request.user, **serializer.validated_data
            )
        except ResolutionRefused as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        return Response(item_detail(request, stage, item))
