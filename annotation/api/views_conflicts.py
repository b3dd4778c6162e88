"""API views for a project's cross-stage conflicts and their dispositions.

Researchers detect and list them, and record a disposition.
"""

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.models import AnnotationProject, CrossStageConflict
from annotation.selectors.conflicts import project_conflicts
from annotation.services import adjudication as adjudication_services
from edufair_web.accounts.permissions import IsResearcher

from .serializers_labelling import (
    ConflictDispositionResultSerializer,
    ConflictDispositionSerializer,
    ConflictRowSerializer,
)


class ConflictsAPIView(APIView):
    """Detect (POST) and list (GET) a project's cross-stage conflicts with their dispositions."""

    permission_classes = [IsResearcher]

    def _rows(self, project):
        return [
            {
                "id": c.pk,
                "item": c.item_id,
                "earlier_stage": c.earlier_stage_id,
                "later_stage": c.later_stage_id,
                "detail": c.detail,
                "disposition": c.disposition,
                "note": c.note,
            }
            for c in project_conflicts(project)
        ]

    @extend_schema(responses=ConflictRowSerializer(many=True))
    def get(self, request, project_pk):
        return Response(self._rows(get_object_or_404(AnnotationProject, pk=project_pk)))

    @extend_schema(request=None, responses=ConflictRowSerializer(many=True))
    def post(self, request, project_pk):
        project = get_object_or_404(AnnotationProject, pk=project_pk)
        adjudication_services.conflicts_detect(project=project)
        return Response(self._rows(project))


class ConflictDispositionAPIView(APIView):
    permission_classes = [IsResearcher]

    @extend_schema(request=ConflictDispositionSerializer, responses=ConflictDispositionResultSerializer)
    def post(self, request, conflict_pk):
        conflict = get_object_or_404(CrossStageConflict, pk=conflict_pk)
        serializer = ConflictDispositionSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        conflict = adjudication_services.conflict_dispose(
            conflict=conflict, by=request.user, **serializer.validated_data
        )
        return Response({"id": conflict.pk, "disposition": conflict.disposition, "note": conflict.note})
