"""API view for a stage's main-labelling settings.

Researchers set its assignment strategy, seed, reservation time and revision window.
"""

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.models import Stage
from annotation.selectors.labelling_settings import labelling_settings
from annotation.services.labelling import stage_labelling_configure
from edufair_web.accounts.permissions import IsResearcher

from .serializers_labelling import StageLabellingSerializer


class StageLabellingSettingsAPIView(APIView):
    """A stage's assignment strategy, seed and reservation time (researchers)."""

    permission_classes = [IsResearcher]

    @extend_schema(responses=StageLabellingSerializer)
    def get(self, request, stage_pk):
        stage = get_object_or_404(Stage, pk=stage_pk)
        return Response(StageLabellingSerializer(labelling_settings(stage)).data)

    @extend_schema(request=StageLabellingSerializer, responses=StageLabellingSerializer)
    def put(self, request, stage_pk):
        stage = get_object_or_404(Stage, pk=stage_pk)
        serializer = StageLabellingSerializer(data=request.data, partial=True)
        serializer.is_valid(raise_exception=True)
        try:
            settings = stage_labelling_configure(stage=stage, **serializer.validated_data)
        except ValueError as exc:
            raise ValidationError(str(exc)) from exc
        return Response(StageLabellingSerializer(settings).data)
