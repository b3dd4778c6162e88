"""API of the question bank and the demographic design.

For researchers only, reads and writes alike. Prompt templates are never
updated in place: POST /prompt-templates/{id}/revise/ writes the next version, and a used version cannot
be deleted (409).
"""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response

from audits.api.serializers_questionbank import (
    DemographicDimensionSerializer,
    DemographicLevelSerializer,
    NameCueSerializer,
    PromptTemplateReviseSerializer,
    PromptTemplateSerializer,
    QuestionImportSerializer,
    QuestionImportUploadSerializer,
    QuestionSerializer,
)
from audits.models import (
    QuestionImport,
    QuestionSource,
)
from audits.prompt_templates import TEMPLATE_KIND_CHOICES
from audits.questionbank.records import ImportFileError
from audits.selectors.design import (
    dimensions_with_levels,
    levels_with_dimension,
    name_cues,
    prompt_template_has_later_versions,
    prompt_templates_filter,
)
from audits.selectors.questionbank import question_imports_newest_first, questions_filter
from audits.services.design import (
    TemplateMetricsError,
    TemplateTextError,
    prompt_template_create,
    prompt_template_revise,
)
from audits.services.questionbank import question_import_submit
from edufair_web.accounts.permissions import IsResearcher
from edufair_web.api_parameters import choice_parameter, id_parameter, query_choice
from edufair_web.converters import query_id
from edufair_web.json_parser import DepthBoundedJSONParser

TEMPLATE_KINDS = [kind for kind, _ in TEMPLATE_KIND_CHOICES]


class ResearchersOnlyMixin:
    """The question bank, the design, prompt templates and imports are research material, as their pages are."""

    permission_classes = [IsResearcher]


@extend_schema(
    parameters=[
        OpenApiParameter("domain", str, description="Only this domain's questions: mathematics, physics, chemistry, …"),
        choice_parameter("source", QuestionSource.values, "Only the questions of this source."),
        id_parameter("import", "Only the questions this import brought (or found already there)."),
        OpenApiParameter("q", str, description="Only the questions whose text contains this (any case)."),
    ]
)
class QuestionViewSet(ResearchersOnlyMixin, viewsets.ReadOnlyModelViewSet):
    serializer_class = QuestionSerializer

    def get_queryset(self):
        params = self.request.query_params
        import_id = query_id(params, "import")
        try:
            return questions_filter(
                domain=params.get("domain") or None,
                source=query_choice(params, "source", QuestionSource.values),
                import_id=import_id,
                search=params.get("q") or None,
            )
        except ValueError as exc:
            raise ValidationError({"detail": str(exc)}) from exc


class QuestionImportViewSet(
    ResearchersOnlyMixin,
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.CreateModelMixin,
    viewsets.GenericViewSet,
):
    queryset = question_imports_newest_first()
    serializer_class = QuestionImportSerializer
    parser_classes = [MultiPartParser, FormParser, DepthBoundedJSONParser]

    @extend_schema(
        request={"multipart/form-data": QuestionImportUploadSerializer},
        responses={201: QuestionImportSerializer, 202: QuestionImportSerializer, 400: OpenApiTypes.OBJECT},
        description="Upload and import a file. Small files are imported at once (201, or 400 with the import's "
        "fields and error when the file is rejected, or with field errors when the upload itself is invalid); "
        "large ones are queued (202) — poll the import for progress.",
    )
    def create(self, request, *args, **kwargs):
        upload = QuestionImportUploadSerializer(data=request.data)
        upload.is_valid(raise_exception=True)
        try:
            question_import = question_import_submit(
                source=upload.validated_data["source"],
                uploaded_file=upload.validated_data["file"],
                parameters=upload.validated_data["parameters"],
                user=request.user,
            )
        except ImportFileError as error:
            return Response({"detail": str(error)}, status=status.HTTP_400_BAD_REQUEST)
        code = {
            QuestionImport.Status.DONE: status.HTTP_201_CREATED,
            QuestionImport.Status.FAILED: status.HTTP_400_BAD_REQUEST,
        }.get(question_import.status, status.HTTP_202_ACCEPTED)
        return Response(QuestionImportSerializer(question_import).data, status=code)


class DemographicDimensionViewSet(ResearchersOnlyMixin, viewsets.ModelViewSet):
    queryset = dimensions_with_levels()
    serializer_class = DemographicDimensionSerializer


class DemographicLevelViewSet(ResearchersOnlyMixin, viewsets.ModelViewSet):
    queryset = levels_with_dimension()
    serializer_class = DemographicLevelSerializer


class NameCueViewSet(ResearchersOnlyMixin, viewsets.ModelViewSet):
    queryset = name_cues()
    serializer_class = NameCueSerializer


@extend_schema_view(
    list=extend_schema(
        parameters=[
            choice_parameter("kind", TEMPLATE_KINDS, "Only the templates of this kind."),
            OpenApiParameter("name", str, description="Only the versions of this variant, e.g. tutor."),
        ]
    )
)
class PromptTemplateViewSet(
    ResearchersOnlyMixin,
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.CreateModelMixin,
    mixins.DestroyModelMixin,
    viewsets.GenericViewSet,
):
    """No PUT/PATCH: a template version is edited by POSTing to its `revise` action, which saves a new version."""

    queryset = prompt_templates_filter()
    serializer_class = PromptTemplateSerializer

    def get_queryset(self):
        return prompt_templates_filter(
            kind=query_choice(self.request.query_params, "kind", TEMPLATE_KINDS),
            name=self.request.query_params.get("name"),
        )

    def perform_create(self, serializer):
        data = serializer.validated_data
        serializer.instance = prompt_template_create(
            kind=data["kind"], name=data["name"], text=data["text"], description=data.get("description", ""),
            metrics=data.get("metrics"), user=self.request.user,
        )  # fmt: skip

    @extend_schema(request=PromptTemplateReviseSerializer, responses={201: PromptTemplateSerializer})
    @action(detail=True, methods=["post"])
    def revise(self, request, pk=None):
        revision = PromptTemplateReviseSerializer(data=request.data)
        revision.is_valid(raise_exception=True)
        try:
            template = prompt_template_revise(template=self.get_object(), user=request.user, **revision.validated_data)
        except TemplateTextError as error:
            field = "metrics" if isinstance(error, TemplateMetricsError) else "text"
            return Response({field: [str(error)]}, status=status.HTTP_400_BAD_REQUEST)
        return Response(PromptTemplateSerializer(template).data, status=status.HTTP_201_CREATED)

    def destroy(self, request, *args, **kwargs):
        template = self.get_object()
        if template.is_used:
            return Response(
                {"detail": f"{template} has been used by an audit and cannot be deleted."},
                status=status.HTTP_409_CONFLICT,
            )
        if prompt_template_has_later_versions(template=template):
            return Response({"detail": f"{template} has later versions."}, status=status.HTTP_409_CONFLICT)
        return super().destroy(request, *args, **kwargs)
