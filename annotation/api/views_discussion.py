"""API views for an item's discussion, served only as the blindness rule allows.

They serve the annotator's disputed items, the discussion itself (read, comment, post-discussion answers) and closing it
(adjudicators).

An item's discussion is served only through `workflow.blindness` (404 to anyone it keeps out).
"""

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.exceptions import NotFound
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.models import Item, Stage
from annotation.selectors.adjudication import adjudication_thread, discussion_visibility_for, my_disputed_items
from annotation.services import adjudication as adjudication_services
from annotation.services.resolution import ResolutionRefused
from annotation.workflow.answers import LabelInvalid, answers_from_json
from edufair_web.accounts.permissions import IsAdjudicator, IsAnnotator
from edufair_web.api_parameters import STAGE_FILTER
from edufair_web.converters import query_id

from .item_detail import item_detail
from .serializers_labelling import DiscussionAnswersSerializer, DisputedItemSerializer, ItemDetailSerializer


class MyDisputedItemsAPIView(APIView):
    """The main items you labelled whose discussion opened, with the thread id, open or closed, the item's
    status and whether you gave your post-discussion answers (?stage= filters). Labels are read through
    the item's discussion endpoint, as the blindness rule allows."""

    permission_classes = [IsAnnotator]

    @extend_schema(
        parameters=[STAGE_FILTER],
        responses=DisputedItemSerializer(many=True),
    )
    def get(self, request):
        stage_id = query_id(request.query_params, "stage")
        stage = get_object_or_404(Stage, pk=stage_id) if stage_id is not None else None
        return Response(my_disputed_items(annotator=request.user, stage=stage))


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
        return Response(item_detail(request, stage, item, visibility))

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
            thread = adjudication_thread(stage, item)
            return Response(
                {
                    "stage": stage.pk,
                    "item": item.pk,
                    "discussion": {"thread": thread.pk if thread else None, "open": False},
                }
            )
        return Response(item_detail(request, stage, item, after))


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
        return Response(item_detail(request, stage, item))
