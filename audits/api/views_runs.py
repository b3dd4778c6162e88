"""API of the audit engine (researchers only): model endpoints, audits and their controls, dialogues.

Model endpoints come with a connection test; audits can be created, launched, paused, resumed, cancelled, cloned, have
their failed dialogues retried and their unparsable and failed turns re-judged, and report their progress; dialogues
come with their transcripts."""

from django.db import transaction
from django.db.models import ProtectedError
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from audits.api.serializers_runs import (
    AuditCreateSerializer,
    AuditDetailSerializer,
    AuditSerializer,
    CalibrationTutorSerializer,
    CloneSerializer,
    DialogueDetailSerializer,
    DialogueSerializer,
    ModelEndpointSerializer,
)
from audits.models import Dialogue, ModelEndpoint, PromptTemplate
from audits.selectors.endpoints import endpoint_list
from audits.selectors.run_pages import audits_newest_first, dialogues_listed
from audits.selectors.runs import audit_progress, clone_factor_value
from audits.services.audit_lifecycle import (
    audit_cancel,
    audit_clone,
    audit_create_from_design,
    audit_launch,
    audit_pause,
    audit_resume,
    audit_retry_failed,
)
from audits.services.calibration_runs import calibration_tutor_get_or_create
from audits.services.endpoints import endpoint_connection_test, endpoint_revision_bump
from audits.services.judging import audit_turns_rejudge
from edufair_web.accounts.permissions import IsResearcher
from edufair_web.api_parameters import choice_parameter, id_parameter, query_choice
from edufair_web.converters import query_id


class ModelEndpointViewSet(viewsets.ModelViewSet):
    queryset = endpoint_list()
    serializer_class = ModelEndpointSerializer
    permission_classes = [IsResearcher]

    @extend_schema(responses={204: None, 409: dict})
    def destroy(self, request, *args, **kwargs):
        """An endpoint that audits used stays: its dialogues and ledger rows name it (409 says so)."""
        try:
            return super().destroy(request, *args, **kwargs)
        except ProtectedError:
            return Response(
                {"detail": "This endpoint is used by audits; it cannot be deleted."}, status=status.HTTP_409_CONFLICT
            )

    @extend_schema(request=None, responses={200: dict})
    @action(detail=True, methods=["post"], url_path="test-connection")
    def test_connection(self, request, pk=None):
        ok, message = endpoint_connection_test(endpoint=self.get_object())
        # ok is null while the server is still loading its model (it answered 503 "loading" to every try).
        state = "loading" if ok is None else "ok" if ok else "failed"
        return Response({"ok": ok, "state": state, "message": message})

    @extend_schema(request=None, responses={200: ModelEndpointSerializer})
    @action(detail=True, methods=["post"], url_path="model-changed")
    def model_changed(self, request, pk=None):
        """The model behind this endpoint's URL changed: its revision goes up by one, so its earlier
        answers are no longer reused and the next run asks the new model."""
        endpoint = self.get_object()
        endpoint_revision_bump(endpoint=endpoint)
        return Response(self.get_serializer(endpoint).data)

    @extend_schema(request=CalibrationTutorSerializer, responses={200: ModelEndpointSerializer, 400: dict})
    @action(detail=False, methods=["post"], url_path="calibration-tutor")
    def calibration_tutor(self, request):
        """The simulation tutor of a calibration run, planting one bias (level, metric, shift): made once per bias
        and seed, a tutor only. Name it among an audit's tutors; the audit must find that cell."""
        serializer = CalibrationTutorSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            endpoint = calibration_tutor_get_or_create(**serializer.validated_data)
        except ValueError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        return Response(self.get_serializer(endpoint).data)


class AuditViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, mixins.CreateModelMixin, viewsets.GenericViewSet):
    # audit_list counts each audit's done and failed dialogues, which the outcome field reads.
    queryset = audits_newest_first()
    serializer_class = AuditSerializer
    permission_classes = [IsResearcher]

    def get_serializer_class(self):
        if self.action == "create":
            return AuditCreateSerializer
        if self.action == "clone":
            return CloneSerializer
        if self.action == "retrieve":
            return AuditDetailSerializer
        return AuditSerializer

    @extend_schema(request=AuditCreateSerializer, responses={201: AuditSerializer})
    def create(self, request, *args, **kwargs):
        serializer = AuditCreateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = dict(serializer.validated_data)
        launch = data.pop("launch")
        try:
            with transaction.atomic():
                audit = audit_create_from_design(
                    name=data.pop("name"),
                    tutors=data.pop("tutors"),
                    student_endpoint=data.pop("student_endpoint"),
                    judge_endpoint=data.pop("judge_endpoint"),
                    selection=data.pop("selection"),
                    choice=data.pop("conditions"),
                    created_by=request.user,
                    **data,
                )
                if launch:
                    audit_launch(audit=audit)
        except (ValueError, TypeError) as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        audit.refresh_from_db()
        return Response(AuditSerializer(audit).data, status=status.HTTP_201_CREATED)

    def _state_change(self, change) -> Response:
        audit = self.get_object()
        try:
            result = change(audit=audit)
        except ValueError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        audit.refresh_from_db()
        return Response({"status": audit.status, "result": result, "progress": audit_progress(audit=audit)})

    @extend_schema(request=None, responses={200: dict})
    @action(detail=True, methods=["post"])
    def launch(self, request, pk=None):
        return self._state_change(audit_launch)

    @extend_schema(request=None, responses={200: dict})
    @action(detail=True, methods=["post"])
    def pause(self, request, pk=None):
        return self._state_change(audit_pause)

    @extend_schema(request=None, responses={200: dict})
    @action(detail=True, methods=["post"])
    def resume(self, request, pk=None):
        return self._state_change(audit_resume)

    @extend_schema(request=None, responses={200: dict})
    @action(detail=True, methods=["post"])
    def cancel(self, request, pk=None):
        return self._state_change(audit_cancel)

    @extend_schema(request=None, responses={200: dict})
    @action(detail=True, methods=["post"], url_path="retry-failed")
    def retry_failed(self, request, pk=None):
        return self._state_change(audit_retry_failed)

    @extend_schema(
        request=None,
        responses={200: dict, 409: dict},
        description="Queue the re-judging of the audit's unparsable and failed judge turns (tutor turns of "
        "finished dialogues) with its judge and rubric. Unparsable answers are asked afresh, never reused. "
        "`result` is the number of turns queued; the progress counts fall as the worker stores them.",
    )
    @action(detail=True, methods=["post"])
    def rejudge(self, request, pk=None):
        return self._state_change(audit_turns_rejudge)

    @extend_schema(responses={200: dict})
    @action(detail=True, methods=["get"])
    def progress(self, request, pk=None):
        return Response(audit_progress(audit=self.get_object()))

    @extend_schema(request=CloneSerializer, responses={201: AuditSerializer})
    @action(detail=True, methods=["post"])
    def clone(self, request, pk=None):
        audit = self.get_object()
        serializer = CloneSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        factor, value = serializer.validated_data["factor"], serializer.validated_data["value"]
        try:
            change = {factor: clone_factor_value(factor, value)}
            clone = audit_clone(
                audit=audit, change=change, created_by=request.user, name=serializer.validated_data["name"]
            )
        except (ValueError, TypeError, ModelEndpoint.DoesNotExist, PromptTemplate.DoesNotExist) as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        return Response(AuditSerializer(clone).data, status=status.HTTP_201_CREATED)


@extend_schema_view(
    list=extend_schema(
        parameters=[
            id_parameter("audit", "Only the dialogues of the audit with this id."),
            choice_parameter("status", Dialogue.Status.values, "Only the dialogues in this state."),
        ]
    )
)
class DialogueViewSet(viewsets.ReadOnlyModelViewSet):
    """Dialogues (filter with ?audit=ID&status=done); a dialogue's page holds its turns, scores and calls."""

    permission_classes = [IsResearcher]

    def get_queryset(self):
        return dialogues_listed(
            audit_id=query_id(self.request.query_params, "audit"),
            status=query_choice(self.request.query_params, "status", Dialogue.Status.values),
            with_transcript=self.action == "retrieve",
        )

    def get_serializer_class(self):
        return DialogueDetailSerializer if self.action == "retrieve" else DialogueSerializer
