"""API: import a Label Studio project export into a project (researchers; atomic, 400 lists the errors)."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.label_studio.importing import LabelStudioImportFailed, label_studio_import
from annotation.models import AnnotationProject
from edufair_web.accounts.permissions import IsResearcher
from edufair_web.upload_limits import MaxUploadSize, upload_limit, upload_size_error


class LabelStudioImportSerializer(serializers.Serializer):
    file = serializers.FileField(
        required=False, validators=[MaxUploadSize("items")], help_text="Label Studio's JSON export (multipart)."
    )
    content = serializers.CharField(
        # In characters, for the schema; validate_content holds it to the byte limit in force.
        required=False,
        trim_whitespace=False,
        help_text="The same JSON as text.",
        max_length=upload_limit("items"),
    )
    stage = serializers.IntegerField(required=False, min_value=1, help_text="Stage for annotations naming none.")
    accept_revisions = serializers.BooleanField(
        required=False,
        default=False,
        help_text="Keep a label changed in Label Studio as a revision beside the original; otherwise its task is "
        "refused (listed in `refused`) and the rest imported.",
    )
    instance = serializers.CharField(
        required=False,
        default="",
        allow_blank=True,
        max_length=100,
        help_text="A name for the Label Studio instance the file comes from: annotators named by user number only "
        "are told apart by (instance, number).",
    )

    def validate_content(self, value: str) -> str:
        error = upload_size_error("items", len(value.encode("utf-8", "surrogatepass")))
        if error:
            raise serializers.ValidationError(error)
        return value

    def validate(self, attrs):
        if bool(attrs.get("file")) == bool(attrs.get("content")):
            raise serializers.ValidationError("send the export as either file or content")
        return attrs


LabelStudioImportResultSerializer = inline_serializer(
    name="LabelStudioImportResult",
    fields={
        name: serializers.IntegerField()
        for name in (
            "items_created",
            "items_matched",
            "annotators_created",
            "labels_created",
            "labels_unchanged",
            "labels_revised",
            "gold_labels",
            "adjudications",
            "tasks_refused",
        )
    }
    | {
        "refused": serializers.ListField(child=serializers.CharField()),
        "warnings": serializers.ListField(child=serializers.CharField()),
    },
)


class LabelStudioImportAPIView(APIView):
    permission_classes = [IsResearcher]

    @extend_schema(request=LabelStudioImportSerializer, responses={201: LabelStudioImportResultSerializer})
    def post(self, request, project_pk):
        project = get_object_or_404(AnnotationProject, pk=project_pk)
        serializer = LabelStudioImportSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        upload = serializer.validated_data.get("file")
        content = upload.read() if upload else serializer.validated_data["content"]
        try:
            report = label_studio_import(
                project=project,
                content=content,
                stage_order=serializer.validated_data.get("stage"),
                accept_revisions=serializer.validated_data["accept_revisions"],
                instance=serializer.validated_data["instance"],
            )
        except LabelStudioImportFailed as exc:
            listed = f"; the first {len(exc.errors)} are listed, and {exc.more} more." if exc.more else "."
            return Response(
                {
                    "detail": f"Nothing was imported: {exc.total} error(s){listed}",
                    "errors": exc.errors,
                    "more": exc.more,
                },
                status=status.HTTP_400_BAD_REQUEST,
            )
        return Response(report.as_dict(), status=status.HTTP_201_CREATED)
