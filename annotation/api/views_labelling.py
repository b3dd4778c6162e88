"""API views for main labelling: the next item, its submit, the recent items and label revision.

They serve annotators who passed the gate.

Labelling stays blind: the next-item answer carries the item and the questions only, never other labels.
"""

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.exceptions import NotFound, PermissionDenied
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.models import Stage
from annotation.selectors.label_form import label_form_questions
from annotation.selectors.projects import project_item
from annotation.selectors.revisions import recent_items
from annotation.services import main_sql
from annotation.services.assignment import AssignmentBusy
from annotation.services.labelling import (
    NoAssignment,
    ReservationExpired,
    RevisionRefused,
    label_next,
    label_revise,
    main_label_submit,
    main_labelling_check,
)
from annotation.services.main_sql import LabellingAccess
from annotation.workflow.answers import LabelInvalid, answers_from_json
from annotation.workflow.training import StepRefused
from edufair_web.accounts.permissions import IsAnnotator

from .serializers_labelling import (
    MainNextSerializer,
    MainSubmitResultSerializer,
    MainSubmitSerializer,
    RecentItemSerializer,
    ReviseResultSerializer,
    ReviseSerializer,
)
from .serializers_training import AnnotatorItemSerializer


def _checked_access(request, stage_pk) -> LabellingAccess:
    """The stage and the caller's standing in it, if they may label its main items now (404 / 403 otherwise)."""
    try:
        return main_labelling_check(annotator=request.user, stage_id=stage_pk)
    except Stage.DoesNotExist as exc:
        raise NotFound("No such stage.") from exc
    except StepRefused as exc:
        raise PermissionDenied(str(exc)) from exc


class MainNextAPIView(APIView):
    """Your current main item in the stage (the same one until you submit it); 204 when none is left;
    503 with Retry-After when every open item is being handed out to others at this instant."""

    permission_classes = [IsAnnotator]

    @extend_schema(
        responses={
            200: MainNextSerializer,
            204: OpenApiResponse(description="No item left for you."),
            503: OpenApiResponse(description="Every open item is being handed out; retry after Retry-After."),
        }
    )
    def get(self, request, stage_pk):
        checked = _checked_access(request, stage_pk)
        stage = checked.stage
        try:
            assignment = label_next(annotator=request.user, stage=stage, checked=checked)
        except AssignmentBusy as exc:
            return Response(
                {"detail": str(exc)}, status=status.HTTP_503_SERVICE_UNAVAILABLE, headers={"Retry-After": "1"}
            )
        if assignment is None:
            return Response(status=status.HTTP_204_NO_CONTENT)
        main_sql.stage_questions(stage)  # one SQL read for the form below
        return Response(
            {
                "assignment": assignment.pk,
                "reserved_until": assignment.reserved_until,
                "item": AnnotatorItemSerializer(assignment.item).data,
                "questions": label_form_questions(stage),  # from `main_sql.stage_questions`
                "progress": {"mine": checked.main_submitted},
            }
        )


class MainSubmitAPIView(APIView):
    """Submit your answers to your reserved item: 201, or 200 when it was already submitted (nothing
    changes); 400 with per-question errors; 409 when the reservation expired and the item went elsewhere."""

    permission_classes = [IsAnnotator]

    @extend_schema(
        request=MainSubmitSerializer, responses={201: MainSubmitResultSerializer, 200: MainSubmitResultSerializer}
    )
    def post(self, request, stage_pk):
        checked = _checked_access(request, stage_pk)
        stage = checked.stage
        serializer = MainSubmitSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        try:
            result = main_label_submit(
                annotator=request.user,
                stage=stage,
                item=data["item"],
                answers=answers_from_json(data["answers"]),
                seconds=data["seconds"],
                checked=checked,
            )
        except ReservationExpired as exc:
            if project_item(stage.project_id, data["item"]) is None:
                raise NotFound("No such item in this project.") from exc
            return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        except NoAssignment as exc:
            raise NotFound(str(exc)) from exc
        except LabelInvalid as exc:
            return Response({"answers": exc.errors}, status=status.HTTP_400_BAD_REQUEST)
        return Response(
            {"assignment": result.assignment.pk, "created": result.created},
            status=status.HTTP_201_CREATED if result.created else status.HTTP_200_OK,
        )


class RecentItemsAPIView(APIView):
    """Your last submitted items in the stage (as many as its revision window allows, newest first), your
    latest answers, whether each item can still be revised (and why not) and the window in time and position.
    Nothing here depends on the other annotators: how an item was resolved, or whether they have submitted,
    would tell what they answered and when."""

    permission_classes = [IsAnnotator]

    @extend_schema(responses=RecentItemSerializer(many=True))
    def get(self, request, stage_pk):
        checked = _checked_access(request, stage_pk)
        rows = recent_items(annotator=request.user, stage=checked.stage)
        return Response(
            [
                {
                    "item": AnnotatorItemSerializer(row["item"]).data,
                    **{key: row[key] for key in ("submitted_at", "revisable", "refusal", "window", "answers")},
                }
                for row in rows
            ]
        )


class ReviseAPIView(APIView):
    """Revise your answers to an item you submitted (send every question, as for a submit) within the
    stage's revision window, whatever the other annotators have done: 200 with the questions given a new
    version (the earlier one is kept; `workflow.revision_rules` says when it counts); 409 with the reason
    once the window has passed; 400 with per-question errors; 404 when you have not submitted the item."""

    permission_classes = [IsAnnotator]

    @extend_schema(request=ReviseSerializer, responses=ReviseResultSerializer)
    def post(self, request, stage_pk, item_pk):
        checked = _checked_access(request, stage_pk)
        serializer = ReviseSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        try:
            result = label_revise(
                annotator=request.user,
                stage=checked.stage,
                item=item_pk,
                answers=answers_from_json(data["answers"]),
                seconds=data["seconds"],
                checked=checked,
            )
        except NoAssignment as exc:
            raise NotFound(str(exc)) from exc
        except RevisionRefused as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        except LabelInvalid as exc:
            return Response({"answers": exc.errors}, status=status.HTTP_400_BAD_REQUEST)
        return Response({"assignment": result.assignment.pk, "revised": list(result.revised)})
