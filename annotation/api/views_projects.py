"""API views for researchers scripting a whole project, and the pass-rate table.

Researchers script a whole project (questions, items and gold, stages, guidelines, examples, training sets, enrolments,
replacements) and read the pass-rate table. Enrolments are also readable by annotators, who only ever get their own."""

from django.contrib.auth.models import User
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema, extend_schema_view, inline_serializer
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from annotation.selectors.projects import (
    enrollment_rows,
    gold_label_rows,
    guideline_rows,
    item_rows,
    narrowed,
    pass_rate_table,
    projects_list,
    question_rows,
    stage_rows,
    worked_example_rows,
)
from annotation.selectors.training import stage_training_items
from annotation.services.enrollment import enrollment_create, enrollment_mark_replacement
from annotation.services.importers import ImportFailed, items_import
from annotation.services.labelling import ItemRuleInvalid, stage_items_append
from annotation.services.projects import project_apply_preset, project_create
from annotation.services.training import SetupError, guideline_publish, training_set_choose, worked_example_add
from edufair_web.accounts.permissions import IsAnnotator, IsResearcher
from edufair_web.accounts.roles import RESEARCHER, has_role
from edufair_web.api_parameters import PROJECT_FILTER, STAGE_FILTER
from edufair_web.converters import query_id

from .serializers_projects import (
    EnrollmentSerializer,
    GoldLabelSerializer,
    GuidelineSerializer,
    ItemImportSerializer,
    ItemSerializer,
    LabelQuestionSerializer,
    PassRateSerializer,
    ProjectSerializer,
    ReplacementSerializer,
    StageSerializer,
    TrainingItemSerializer,
    TrainingSetChooseSerializer,
    WorkedExampleSerializer,
)


def _setup_error(exc: Exception) -> ValidationError:
    return ValidationError({"detail": str(exc)})


class QueryFilterMixin:
    """Narrows a viewset's list by id query parameters, e.g. `?project=3` → `filter(project_id=3)`.

    A value that is not an id is a 400 naming the parameter, not a database error.
    """

    query_filters: dict[str, str] = {}

    def get_queryset(self):
        given = {lookup: query_id(self.request.query_params, param) for param, lookup in self.query_filters.items()}
        return narrowed(super().get_queryset(), {lookup: value for lookup, value in given.items() if value is not None})


def _list_filtered_by(parameter):
    """The list operation's schema declares the id filter its `query_filters` reads."""
    return extend_schema_view(list=extend_schema(parameters=[parameter]))


class ProjectViewSet(viewsets.ModelViewSet):
    queryset = projects_list()
    serializer_class = ProjectSerializer
    permission_classes = [IsResearcher]

    def perform_create(self, serializer):
        data = dict(serializer.validated_data)
        preset = data.pop("preset", "")
        options = data.pop("options", None)
        try:
            project = project_create(**data, preset=preset, by=self.request.user)
        except SetupError as exc:
            raise _setup_error(exc) from exc
        if options:
            project.options = options
            project.save(update_fields=["options"])
        serializer.instance = project

    @extend_schema(request=None, responses={201: StageSerializer(many=True)})
    @action(detail=True, methods=["post"], url_path="apply-preset", pagination_class=None)
    def apply_preset(self, request, pk=None):
        """Build SafeTutors' three stages (or another preset named by `preset`) on an empty project."""
        project = self.get_object()
        try:
            stages = project_apply_preset(
                project=project, preset=request.data.get("preset", "safetutors"), by=request.user
            )
        except SetupError as exc:
            raise _setup_error(exc) from exc
        return Response(StageSerializer(stages, many=True).data, status=status.HTTP_201_CREATED)

    @extend_schema(responses=PassRateSerializer(many=True))
    @action(detail=True, methods=["get"], url_path="pass-rates", pagination_class=None)
    def pass_rates(self, request, pk=None):
        return Response(pass_rate_table(self.get_object()))

    @extend_schema(
        request=ItemImportSerializer,
        responses={
            201: inline_serializer(
                name="ItemImportResult",
                fields={
                    "created": serializers.IntegerField(),
                    "updated": serializers.IntegerField(),
                    "unchanged": serializers.IntegerField(),
                    "gold_labels": serializers.IntegerField(),
                    "main_items_added": serializers.DictField(
                        child=serializers.IntegerField(), help_text="Stage id → main items it gained."
                    ),
                    "notices": serializers.ListField(
                        child=serializers.CharField(),
                        help_text="What the import did not reach, in sentences (a stage's explicit item list).",
                    ),
                    "left_off_lists": serializers.ListField(
                        child=serializers.DictField(),
                        help_text="Per stage with an explicit item list: the imported items (without gold) it does "
                        "not name, as item_ids and external_ids; POST the ids to the stage's add-items.",
                    ),
                },
            )
        },
    )
    @action(detail=True, methods=["post"], url_path="import-items")
    def import_items(self, request, pk=None):
        """Import items (and gold labels) from JSONL or CSV; atomic and idempotent. 400 lists line and field."""
        project = self.get_object()
        serializer = ItemImportSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        upload = serializer.validated_data.get("file")
        content = upload.read() if upload else serializer.validated_data.get("content", "")
        try:
            report = items_import(project=project, content=content, fmt=serializer.validated_data["format"])
        except ImportFailed as exc:
            more = exc.more(len(exc.errors))
            return Response(
                {
                    "detail": f"Nothing was imported: {exc.total} error(s)"
                    + (f"; the first {len(exc.errors)} are listed, and {more} more." if more else "."),
                    "errors": [{"line": line, "field": f, "message": m} for line, f, m in exc.errors],
                    "sentences": exc.sentences(),
                    "more": more,
                },
                status=status.HTTP_400_BAD_REQUEST,
            )
        return Response(report.as_dict(), status=status.HTTP_201_CREATED)


@_list_filtered_by(PROJECT_FILTER)
class LabelQuestionViewSet(QueryFilterMixin, viewsets.ModelViewSet):
    queryset = question_rows()
    serializer_class = LabelQuestionSerializer
    permission_classes = [IsResearcher]

    query_filters = {"project": "project_id"}


@_list_filtered_by(PROJECT_FILTER)
class ItemViewSet(QueryFilterMixin, viewsets.ModelViewSet):
    queryset = item_rows()
    serializer_class = ItemSerializer
    permission_classes = [IsResearcher]

    query_filters = {"project": "project_id"}


@_list_filtered_by(PROJECT_FILTER)
class GoldLabelViewSet(QueryFilterMixin, viewsets.ModelViewSet):
    queryset = gold_label_rows()
    serializer_class = GoldLabelSerializer
    permission_classes = [IsResearcher]

    query_filters = {"project": "item__project_id"}


class StageItemsAddSerializer(serializers.Serializer):
    item_ids = serializers.ListField(child=serializers.IntegerField(min_value=1), max_length=100_000)


@_list_filtered_by(PROJECT_FILTER)
class StageViewSet(QueryFilterMixin, viewsets.ModelViewSet):
    queryset = stage_rows()
    serializer_class = StageSerializer
    permission_classes = [IsResearcher]

    query_filters = {"project": "project_id"}

    @extend_schema(
        request=TrainingSetChooseSerializer,
        responses={
            201: inline_serializer(
                name="TrainingSetChosen",
                fields={
                    "item_ids": serializers.ListField(child=serializers.IntegerField()),
                    "even": serializers.BooleanField(help_text="Spread evenly across categories × subjects."),
                    "problems": serializers.ListField(child=serializers.CharField()),
                    "cells": serializers.ListField(child=serializers.DictField()),
                    "category_counts": serializers.DictField(child=serializers.IntegerField()),
                    "subject_counts": serializers.DictField(child=serializers.IntegerField()),
                },
            )
        },
    )
    @action(detail=True, methods=["post"], url_path="choose-training-set")
    def choose_training_set(self, request, pk=None):
        """Draw the pilot (spread evenly across categories × subjects) or the qualification test from gold."""
        stage = self.get_object()
        serializer = TrainingSetChooseSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            sample = training_set_choose(stage=stage, **serializer.validated_data)
        except SetupError as exc:
            raise _setup_error(exc) from exc
        return Response(sample.as_dict(), status=status.HTTP_201_CREATED)

    @extend_schema(
        request=StageItemsAddSerializer,
        responses={
            200: inline_serializer(
                name="StageItemsAdded",
                fields={"added": serializers.IntegerField(), "listed": serializers.IntegerField()},
            )
        },
    )
    @action(detail=True, methods=["post"], url_path="add-items")
    def add_items(self, request, pk=None):
        """Add items to the end of this stage's explicit item list (e.g. an import's left_off_lists)."""
        stage = self.get_object()
        given = StageItemsAddSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        try:
            settings, _, added = stage_items_append(stage=stage, item_ids=given.validated_data["item_ids"])
        except ItemRuleInvalid as exc:
            raise ValidationError(exc.errors) from exc
        return Response({"added": added, "listed": len(settings.item_ids)})

    @extend_schema(responses=TrainingItemSerializer(many=True))
    @action(detail=True, methods=["get"], url_path="training-items", pagination_class=None)
    def training_items(self, request, pk=None):
        items = stage_training_items(self.get_object())
        return Response(TrainingItemSerializer(items, many=True).data)


@_list_filtered_by(STAGE_FILTER)
class GuidelineViewSet(QueryFilterMixin, mixins.CreateModelMixin, viewsets.ReadOnlyModelViewSet):
    """Guidelines are versioned: creating one publishes the stage's next version (never edits an old one)."""

    queryset = guideline_rows()
    serializer_class = GuidelineSerializer
    permission_classes = [IsResearcher]
    query_filters = {"stage": "stage_id"}

    def perform_create(self, serializer):
        data = serializer.validated_data
        try:
            serializer.instance = guideline_publish(
                stage=data["stage"], text=data["text"], change_note=data.get("change_note", ""), by=self.request.user
            )
        except SetupError as exc:
            raise _setup_error(exc) from exc


@_list_filtered_by(STAGE_FILTER)
class WorkedExampleViewSet(QueryFilterMixin, viewsets.ModelViewSet):
    queryset = worked_example_rows()
    serializer_class = WorkedExampleSerializer
    permission_classes = [IsResearcher]
    query_filters = {"stage": "stage_id"}

    def perform_create(self, serializer):
        data = serializer.validated_data
        try:
            serializer.instance = worked_example_add(
                stage=data["stage"],
                item=data["item"],
                question=data["question"],
                kind=data["kind"],
                value=data["value"],
                rationale=data["rationale"],
            )
        except SetupError as exc:
            raise _setup_error(exc) from exc


@_list_filtered_by(STAGE_FILTER)
class EnrollmentViewSet(mixins.CreateModelMixin, viewsets.ReadOnlyModelViewSet):
    """Researchers see and create every enrolment; anyone else sees only their own."""

    queryset = enrollment_rows()  # narrowed per caller in get_queryset
    serializer_class = EnrollmentSerializer
    permission_classes = [IsAnnotator]

    def get_queryset(self):
        user = None if has_role(self.request.user, RESEARCHER) else self.request.user
        return enrollment_rows(user=user, stage_id=query_id(self.request.query_params, "stage"))

    def create(self, request, *args, **kwargs):
        if not has_role(request.user, RESEARCHER):
            return Response({"detail": "Researchers enrol annotators."}, status=status.HTTP_403_FORBIDDEN)
        return super().create(request, *args, **kwargs)

    def perform_create(self, serializer):
        data = serializer.validated_data
        try:
            serializer.instance = enrollment_create(
                stage=data["stage"], user=data["user"], subject=data.get("subject", "")
            )
        except SetupError as exc:
            raise _setup_error(exc) from exc

    @extend_schema(request=ReplacementSerializer, responses=EnrollmentSerializer)
    @action(detail=True, methods=["post"], permission_classes=[IsResearcher])
    def replace(self, request, pk=None):
        """Mark this recruit as replaced, optionally enrolling `replacement_user` in their place."""
        enrollment = self.get_object()
        serializer = ReplacementSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        user_id = serializer.validated_data.get("replacement_user")
        replacement = get_object_or_404(User, pk=user_id) if user_id else None
        try:
            enrollment = enrollment_mark_replacement(
                enrollment=enrollment,
                replacement_user=replacement,
                note=serializer.validated_data["note"],
                by=request.user,
            )
        except SetupError as exc:
            raise _setup_error(exc) from exc
        return Response(EnrollmentSerializer(enrollment, context={"request": request}).data)
