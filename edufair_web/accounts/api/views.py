"""API of the project shell: who am I, API tokens (obtain, list mine, revoke), the workers' heartbeats."""

from django.contrib.auth.signals import user_logged_in
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import parsers, serializers, viewsets
from rest_framework.decorators import api_view, permission_classes
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from ..models import WorkerHeartbeat
from ..permissions import IsResearcher
from ..roles import user_roles
from ..selectors import worker_heartbeats
from ..throttles import LoginRateThrottle
from ..tokens import api_token_issue, api_token_revoke, api_tokens_of, api_tokens_revoke_all
from .serializers import CredentialsSerializer


class WorkerHeartbeatSerializer(serializers.ModelSerializer):
    class Meta:
        model = WorkerHeartbeat
        fields = ["hostname", "started_at", "last_seen", "last_task_at"]


class WorkerHeartbeatViewSet(viewsets.ReadOnlyModelViewSet):
    queryset = worker_heartbeats()
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


class TokenSerializer(serializers.Serializer):
    token = serializers.CharField(help_text="Send as `Authorization: Token <token>`; shown once, stored as a digest.")
    expiry = serializers.DateTimeField(help_text="The token stops working at this time (API_TOKEN_TTL_HOURS).")


class ApiTokenSerializer(serializers.Serializer):
    token_key = serializers.CharField(help_text="The token's first characters: what names it to revoke it.")
    created = serializers.DateTimeField()
    expiry = serializers.DateTimeField(allow_null=True)
    current = serializers.BooleanField(help_text="The token this request was authenticated with.")


class TokenObtainView(APIView):
    """Password → a new token with its expiry; 429 while django-axes has the username locked out, or when this
    client address has tried too many log-ins (with Retry-After).

    axes marks the DRF request it was given; its middleware only sees Django's request, so the
    lockout must be turned into a response here.
    """

    # The default authentication stays: a signed-in browser's post must carry its CSRF token, as every form's.
    permission_classes = (AllowAny,)
    throttle_classes = (LoginRateThrottle,)
    parser_classes = (parsers.FormParser, parsers.MultiPartParser, parsers.JSONParser)

    @extend_schema(request=CredentialsSerializer, responses={200: TokenSerializer}, auth=[])
    def post(self, request, *args, **kwargs):
        credentials = CredentialsSerializer(data=request.data, context={"request": request})
        try:
            credentials.is_valid(raise_exception=True)
        except ValidationError:
            if getattr(request, "axes_locked_out", False):
                return _locked_out()
            raise
        user = credentials.validated_data["user"]
        instance, token = api_token_issue(user=user)
        user_logged_in.send(sender=type(user), request=request, user=user)  # axes resets the failures it counted
        return Response(TokenSerializer({"token": token, "expiry": instance.expiry}).data)


def _locked_out() -> Response:
    return Response({"detail": "Too many failed log-ins; this account is locked for now."}, status=429)


class ApiTokenListView(APIView):
    """GET: my tokens that still work (never the tokens themselves); DELETE: revoke all of them."""

    permission_classes = (IsAuthenticated,)

    @extend_schema(responses=ApiTokenSerializer(many=True))
    def get(self, request):
        current = getattr(request.auth, "digest", None)
        rows = [
            {"token_key": t.token_key, "created": t.created, "expiry": t.expiry, "current": t.digest == current}
            for t in api_tokens_of(user=request.user)
        ]
        return Response(ApiTokenSerializer(rows, many=True).data)

    @extend_schema(operation_id="auth_tokens_destroy_all", responses={204: None})
    def delete(self, request):
        api_tokens_revoke_all(user=request.user)
        return Response(status=204)


class ApiTokenDetailView(APIView):
    """DELETE: revoke one of my tokens, named by its `token_key` (404 when I hold none by that name)."""

    permission_classes = (IsAuthenticated,)

    @extend_schema(responses={204: None, 404: None})
    def delete(self, request, token_key: str):
        if not api_token_revoke(user=request.user, token_key=token_key):
            raise NotFound("You hold no token by that name.")
        return Response(status=204)
