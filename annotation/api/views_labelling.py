"""API for main labelling and adjudication: next item, submit, recent items and revising a label
(annotators who passed the gate), the annotator's disputed items and the discussion of an item (as the
blindness rule allows), the reviewer queue, the discussion threads and decisions (adjudicators), conflict
dispositions, and the project's report, stage dashboard and label exports (researchers).

Labelling stays blind: the next-item answer carries the item and the questions only, never other labels.
An item's discussion is served only through `workflow.blindness` (404 to anyone it keeps out).
"""

from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.exceptions import NotFound, PermissionDenied, ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation import exports, reports
from annotation.models import AnnotationProject, CrossStageConflict, Item, MainItem, Stage, Thread
from annotation.selectors.adjudication import (
    adjudication_queue,
    adjudication_threads,
    discussion_visibility_for,
    item_side_by_side,
    my_disputed_items,
)
from annotation.selectors.label_form import label_form_questions
from annotation.selectors.labelling_settings import labelling_settings
from annotation.selectors.revisions import recent_items
from annotation.selectors.stage_dashboard import stage_dashboard
from annotation.services import adjudication as adjudication_services
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
    stage_labelling_configure,
)
from annotation.services.main_sql import LabellingAccess
from annotation.services.resolution import ResolutionRefused
from annotation.workflow.answers import LabelInvalid, answers_from_json
from annotation.workflow.training import StepRefused
from edufair_web.accounts.permissions import IsAdjudicator, IsAnnotator, IsResearcher
from edufair_web.converters import query_id

from .serializers_labelling import (
    ConflictDispositionResultSerializer,
    ConflictDispositionSerializer,
    ConflictRowSerializer,
    DiscussionAnswersSerializer,
    DisputedItemSerializer,
    ItemDetailSerializer,
    MainNextSerializer,
    MainSubmitResultSerializer,
    MainSubmitSerializer,
    QueueRowSerializer,
    RecentItemSerializer,
    ReviewerDecisionSerializer,
    ReviseResultSerializer,
    ReviseSerializer,
    StageLabellingSerializer,
    ThreadRowSerializer,
)
from .serializers_reports import ReportSerializer, StageDashboardSerializer
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
            if not Item.objects.filter(pk=data["item"], project_id=stage.project_id).exists():
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


def _item_detail(request, stage, item, visibility=None) -> dict:
    """The item's labels and discussion as ``request.user`` may see them (``visibility`` when already read)."""
    if visibility is None:
        visibility = discussion_visibility_for(user=request.user, stage=stage, item=item)
    if visibility is None:
        raise NotFound("No discussion of this item for you.")
    detail = item_side_by_side(stage=stage, item=item, visibility=visibility)
    main_item = MainItem.objects.filter(stage=stage, item=item).first()
    return {
        "stage": stage.pk,
        "item": AnnotatorItemSerializer(item).data,
        "status": main_item.status if main_item else None,
        "questions": [
            {
                "key": row["question"].key,
                "answers": [
                    {
                        "annotator": a["annotator"]["name"],
                        "you": a["annotator"]["you"],
                        **({"username": a["annotator"]["username"]} if visibility.full else {}),
                        "pre": a["pre"],
                        "post": a["post"],
                    }
                    for a in row["answers"]
                ],
                "decision": (
                    {
                        "method": row["decision"].method,
                        "final_value": row["decision"].final_value,
                        "note": row["decision"].note,
                        "decided_by": row["decision"].decided_by.username if row["decision"].decided_by else None,
                    }
                    if row["decision"]
                    else None
                ),
            }
            for row in detail["questions"]
        ],
        "discussion": (
            {
                "thread": detail["thread"].pk,
                "open": detail["thread"].is_open,
                "comments": [
                    {"author": c["author"], "you": c["you"], "body": c["body"], "at": c["created_at"]}
                    for c in detail["comments"]
                ],
            }
            if detail["thread"]
            else None
        ),
    }


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


PROJECT_STAGE_PARAMETERS = [
    OpenApiParameter("project", int, description="Only this project's items."),
    OpenApiParameter("stage", int, description="Only this stage's items."),
]


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
        by_pair = {
            (stage_id, item_id): thread_id
            for stage_id, item_id, thread_id in Thread.objects.filter(
                kind=Thread.Kind.ADJUDICATION,
                stage_id__in={row.stage_id for row in rows},
                item_id__in={row.item_id for row in rows},
            ).values_list("stage_id", "item_id", "id")
        }
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
        parameters=[*PROJECT_STAGE_PARAMETERS, OpenApiParameter("open", bool, description="Open or closed only.")],
        responses=ThreadRowSerializer(many=True),
    )
    def get(self, request):
        raw = request.query_params.get("open", "")
        if raw not in ("", "true", "false"):
            raise ValidationError({"open": "true or false"})
        is_open = None if raw == "" else raw == "true"
        return Response(adjudication_threads(**_project_stage_filters(request), is_open=is_open))


class MyDisputedItemsAPIView(APIView):
    """The main items you labelled whose discussion opened, with the thread id, open or closed, the item's
    status and whether you gave your post-discussion answers (?stage= filters). Labels are read through
    the item's discussion endpoint, as the blindness rule allows."""

    permission_classes = [IsAnnotator]

    @extend_schema(
        parameters=[OpenApiParameter("stage", int, description="Only this stage.")],
        responses=DisputedItemSerializer(many=True),
    )
    def get(self, request):
        stage_id = query_id(request.query_params, "stage")
        stage = get_object_or_404(Stage, pk=stage_id) if stage_id is not None else None
        return Response(my_disputed_items(annotator=request.user, stage=stage))


class RecentItemsAPIView(APIView):
    """Your last submitted items in the stage (as many as its revision window allows, newest first), your
    current answers and whether each item can still be revised (and why not). How an item was resolved is
    not shown: it would tell whether the others agreed."""

    permission_classes = [IsAnnotator]

    @extend_schema(responses=RecentItemSerializer(many=True))
    def get(self, request, stage_pk):
        checked = _checked_access(request, stage_pk)
        rows = recent_items(annotator=request.user, stage=checked.stage)
        return Response(
            [
                {
                    "item": AnnotatorItemSerializer(row["item"]).data,
                    **{key: row[key] for key in ("submitted_at", "revisable", "refusal", "answers")},
                }
                for row in rows
            ]
        )


class ReviseAPIView(APIView):
    """Revise your answers to an item you submitted (send every question, as for a submit) while it still
    waits for its labels and within the stage's revision window: 200 with the questions given a new version
    (the earlier one is kept); 409 with the reason once the item has all its labels or the window passed;
    400 with per-question errors; 404 when you have not submitted the item."""

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


class AdjudicationItemAPIView(APIView):
    """One item's labels side by side (GET), and the reviewer's decisions on its open questions (POST)."""

    permission_classes = [IsAdjudicator]

    @extend_schema(responses=ItemDetailSerializer)
    def get(self, request, stage_pk, item_pk):
        stage = get_object_or_404(Stage, pk=stage_pk)
        item = get_object_or_404(Item, pk=item_pk, project_id=stage.project_id)
        return Response(_item_detail(request, stage, item))

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
        return Response(_item_detail(request, stage, item))


class DiscussionAPIView(APIView):
    """An item's discussion, as the blindness rule allows: in a discussion stage, once all N labels of a
    disputed item are in and while its discussion is open, its annotators read the disputed questions'
    answers (pseudonymised, ``you`` marked), comment, and give post-discussion answers (kept apart from
    their first ones); adjudicators and researchers see everything. Anyone else: 404."""

    permission_classes = [IsAnnotator]

    def _objects(self, request, stage_pk, item_pk):
        stage = get_object_or_404(Stage, pk=stage_pk)
        item = get_object_or_404(Item, pk=item_pk, project_id=stage.project_id)
        visibility = discussion_visibility_for(user=request.user, stage=stage, item=item)
        if visibility is None:
            raise NotFound("No discussion of this item for you.")
        return stage, item, visibility

    @extend_schema(responses=ItemDetailSerializer)
    def get(self, request, stage_pk, item_pk):
        stage, item, visibility = self._objects(request, stage_pk, item_pk)
        return Response(_item_detail(request, stage, item, visibility))

    @extend_schema(request=DiscussionAnswersSerializer, responses=ItemDetailSerializer)
    def post(self, request, stage_pk, item_pk):
        stage, item, _ = self._objects(request, stage_pk, item_pk)
        serializer = DiscussionAnswersSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        try:
            if data["comment"].strip():
                adjudication_services.discussion_comment(
                    stage=stage, item=item, author=request.user, body=data["comment"]
                )
            if data["answers"]:
                adjudication_services.discussion_answers_submit(
                    stage=stage, item=item, annotator=request.user, answers=answers_from_json(data["answers"])
                )
        except ResolutionRefused as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        except LabelInvalid as exc:
            return Response({"answers": exc.errors}, status=status.HTTP_400_BAD_REQUEST)
        after = discussion_visibility_for(user=request.user, stage=stage, item=item)
        if after is None:  # the last post-discussion answer closed the discussion
            thread = Thread.objects.filter(stage=stage, item=item, kind=Thread.Kind.ADJUDICATION).first()
            return Response(
                {
                    "stage": stage.pk,
                    "item": item.pk,
                    "discussion": {"thread": thread.pk if thread else None, "open": False},
                }
            )
        return Response(_item_detail(request, stage, item, after))


class DiscussionCloseAPIView(APIView):
    permission_classes = [IsAdjudicator]

    @extend_schema(request=None, responses=ItemDetailSerializer)
    def post(self, request, stage_pk, item_pk):
        stage = get_object_or_404(Stage, pk=stage_pk)
        item = get_object_or_404(Item, pk=item_pk, project_id=stage.project_id)
        try:
            adjudication_services.discussion_close(stage=stage, item=item)
        except ResolutionRefused as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        return Response(_item_detail(request, stage, item))


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
            for c in project.conflicts.order_by("item_id", "id")
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


class LabelsExportAPIView(APIView):
    """All labels with provenance: ?as=csv | jsonl | labelstudio[-anonymous|-config] (not ?format=, kept by DRF)."""

    permission_classes = [IsResearcher]

    @extend_schema(
        parameters=[OpenApiParameter("as", str, enum=list(exports.FORMATS), description="The export format.")],
        responses={
            (200, "text/csv"): OpenApiTypes.STR,
            (200, "application/x-ndjson"): OpenApiTypes.STR,
            (200, "application/json"): OpenApiTypes.OBJECT,
        },
    )
    def get(self, request, project_pk):
        project = get_object_or_404(AnnotationProject, pk=project_pk)
        fmt = request.query_params.get("as", "jsonl")
        if fmt not in exports.FORMATS:
            raise ValidationError(f"as is one of {', '.join(exports.FORMATS)}")
        body, content_type, filename = exports.export_labels(project, fmt)
        response = HttpResponse(body, content_type=content_type)
        response["Content-Disposition"] = f'attachment; filename="{filename}"'
        return response
