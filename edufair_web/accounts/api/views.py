"""API of the project shell: who am I, and the workers' heartbeats (researchers)."""

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, viewsets
from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.decorators import api_view, permission_classes
from rest_framework.exceptions import ValidationError
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response

from ..models import WorkerHeartbeat
from ..permissions import IsResearcher
from ..roles import user_roles


class WorkerHeartbeatSerializer(serializers.ModelSerializer):
    class Meta:
        model = WorkerHeartbeat
        fields = ["hostname", "started_at", "last_seen", "last_task_at"]


class WorkerHeartbeatViewSet(viewsets.ReadOnlyModelViewSet):
    queryset = WorkerHeartbeat.objects.all()
    serializer_class = WorkerHeartbeatSerializer
    permission_classes = [IsResearcher]
    lookup_field = "hostname"


@extend_schema(
    responses=inline_serializer(
        "Me",
        fields={
            "id": serializers.IntegerField(),
            "username": serializers.CharField(),
            "roles": serializers.ListField(child=serializers.CharField()),
        },
    )
)
@api_view(["GET"])
@permission_classes([IsAuthenticated])
def me(request):
    return Response(
        {"id": request.user.id, "username": request.user.username, "roles": sorted(user_roles(request.user))}
    )


class LockoutAwareObtainAuthToken(ObtainAuthToken):
    """Password → token, refused with 429 while django-axes has the username locked out.

    axes marks the DRF request it was given; its middleware only sees Django's request, so the
    lockout must be turned into a response here.
    """

    def post(self, request, *args, **kwargs):
        try:
            response = super().post(request, *args, **kwargs)
        except ValidationError:
            if getattr(request, "axes_locked_out", False):
                return _locked_out()
            raise
        return response


def _locked_out() -> Response:
    return Response({"detail": "Too many failed log-ins; this account is locked for now."}, status=429)
