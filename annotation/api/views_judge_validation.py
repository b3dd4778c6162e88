"""API of judge validation (researchers): validation projects, their report, judges, verdicts and imported files.

Create a validation project from an audit, read the report (with the label planner for a target half-width,
``?half_width=``), add a judge or re-run one (queued on a worker: 202 with the run's progress, also in GET …/judges/),
set thresholds, record verdicts, record a rubric workshop, hide or show the persona cue, import an MRBench-style file,
and read an audit's judge status."""

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import Http404
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.exceptions import ValidationError
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.judge_validation import services
from annotation.judge_validation.audit_source import audit_by_id, endpoint_by_id
from annotation.judge_validation.importing import MRBenchError, labelled_file_import
from annotation.judge_validation.judging import judge_run_state, judge_validation_add
from annotation.judge_validation.planner import (
    DESIGN_DEFAULTS,
    DESIGN_RANGES,
    HALF_WIDTH_MAX,
    HALF_WIDTH_MIN,
    PlannerInputError,
    design_inputs_from,
    target_half_width_from,
)
from annotation.judge_validation.report import (
    DEFAULT_VERDICT_RULE,
    VERDICT_RULES,
    VerdictRuleError,
    verdict_rule_from,
    verdict_rule_info,
)
from annotation.judge_validation.validity import (
    EPSILON_CROWD,
    EPSILON_EXPERT,
    EPSILON_MAX,
    EPSILON_MIN,
    EpsilonError,
    epsilon_from,
)
from annotation.models import AnnotationProject, JudgeValidation, RubricVersion
from annotation.selectors.judge_validation import (
    judge_validation_status,
    project_rubrics,
    validation_stage,
)
from annotation.selectors.judge_validation_planned import planned_validation_report
from annotation.selectors.projects import project_item_count
from annotation.selectors.validation_projects import project_judges, sampled_item_count
from annotation.services.training import SetupError
from edufair_web.accounts.permissions import IsResearcher
from edufair_web.api_parameters import id_parameter
from edufair_web.converters import parse_id
from edufair_web.json_parser import DepthBoundedJSONParser
from edufair_web.upload_limits import upload_size_error

from .serializers_judge_validation import (
    AuditJudgeStatusSerializer,
    JudgeAddSerializer,
    JudgeValidationRunSerializer,
    JudgeValidationSerializer,
    MRBenchImportResultSerializer,
    MRBenchImportSerializer,
    PersonaResultSerializer,
    PersonaSerializer,
    ThresholdsSerializer,
    ValidationProjectCreatedSerializer,
    ValidationProjectCreateSerializer,
    ValidationReportSerializer,
    WorkshopOutSerializer,
    WorkshopSerializer,
)

_RULE_PARAMETER = OpenApiParameter(
    "rule",
    OpenApiTypes.STR,
    enum=list(VERDICT_RULES),
    description="The verdict rule, by name (default "
    + DEFAULT_VERDICT_RULE
    + "): "
    + "; ".join(f"{name}: {text}" for name, text in VERDICT_RULES.items())
    + ".",
)


def _rule(request) -> str:
    """The ``?rule=`` query parameter, validated (400 naming the choices)."""
    try:
        return verdict_rule_from(request.query_params.get("rule"))
    except VerdictRuleError as exc:
        raise ValidationError({"rule": str(exc)}) from exc


def _project(pk) -> AnnotationProject:
    return get_object_or_404(AnnotationProject, pk=pk, kind=AnnotationProject.Kind.JUDGE_VALIDATION)


def _audit(audit_id):
    audit = audit_by_id(audit_id)
    if audit is None:
        raise Http404("No such audit.")
    return audit


def _rubric(project, rubric_id) -> RubricVersion:
    rubrics = project_rubrics(project)
    if rubric_id in (None, ""):
        if not rubrics:
            raise ValidationError({"rubric": "This project has no rubric version."})
        return rubrics[-1]
    wanted = parse_id(str(rubric_id))
    found = next((r for r in rubrics if r.pk == wanted), None)
    if found is None:
        raise ValidationError({"rubric": "Not a rubric version of this project."})
    return found


class ValidationProjectCreateAPIView(APIView):
    """Create the judge-validation project of an audit in one action (201 with its summary)."""

    permission_classes = [IsResearcher]

    @extend_schema(request=ValidationProjectCreateSerializer, responses={201: ValidationProjectCreatedSerializer})
    def post(self, request):
        serializer = ValidationProjectCreateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = dict(serializer.validated_data)
        audit = _audit(data.pop("audit"))
        try:
            project = services.validation_project_create(audit=audit, by=request.user, **data)
        except SetupError as exc:
            raise ValidationError({"detail": str(exc)}) from exc
        stage = validation_stage(project)
        return Response(
            {
                "project": project.pk,
                "stage": stage.pk,
                "items": sampled_item_count(project),
                "sample": project.options["sample"],
                "hide_persona_cue": project.options["hide_persona_cue"],
                "validations": JudgeValidationSerializer(project_judges(project), many=True).data,
            },
            status=status.HTTP_201_CREATED,
        )


class ValidationReportAPIView(APIView):
    """The report under one rubric version (?rubric=ID; default: the latest with a validation)."""

    permission_classes = [IsResearcher]

    @extend_schema(
        parameters=[
            id_parameter("rubric", "Rubric version id; default: the latest."),
            _RULE_PARAMETER,
            OpenApiParameter(
                "epsilon",
                OpenApiTypes.DOUBLE,
                description=(
                    f"The alt-test's margin ε (above {EPSILON_MIN}, at most {EPSILON_MAX}; default {EPSILON_EXPERT}, "
                    f"the authors' advice for expert annotators; {EPSILON_CROWD} for crowd workers)."
                ),
            ),
            *[
                OpenApiParameter(
                    name,
                    OpenApiTypes.DOUBLE,
                    description=(
                        f"The validation planner's {name.replace('_', ' ')} ({DESIGN_RANGES[name][0]} to "
                        f"{DESIGN_RANGES[name][1]}; default {default})."
                    ),
                )
                for name, default in DESIGN_DEFAULTS.items()
            ],
            OpenApiParameter(
                "half_width",
                OpenApiTypes.DOUBLE,
                description=(
                    "The label planner's target half-width of a judge-corrected contrast's interval "
                    f"({HALF_WIDTH_MIN} to {HALF_WIDTH_MAX}; default 0.25)."
                ),
            ),
        ],
        responses=ValidationReportSerializer,
    )
    def get(self, request, project_pk):
        project = _project(project_pk)
        rubric_id = request.query_params.get("rubric")
        rubric = _rubric(project, rubric_id) if rubric_id else None
        try:
            half_width = target_half_width_from(request.query_params.get("half_width"))
        except PlannerInputError as exc:
            raise ValidationError({"half_width": str(exc)}) from exc
        rule = _rule(request)
        try:
            epsilon = epsilon_from(request.query_params.get("epsilon"))
        except EpsilonError as exc:
            raise ValidationError({"epsilon": str(exc)}) from exc
        try:
            design_inputs = design_inputs_from(request.query_params)
        except PlannerInputError as exc:
            raise ValidationError({"planner": str(exc)}) from exc
        return Response(
            planned_validation_report(
                project, rubric=rubric, rule=rule, epsilon=epsilon, half_width=half_width, design_inputs=design_inputs
            )
        )


class JudgeAddAPIView(APIView):
    """Validate another judge endpoint (or the same one under another rubric version) on the same labels, or
    re-run one: the audit's own judge is copied at once (201); any other run is queued on a worker (202)."""

    permission_classes = [IsResearcher]

    @extend_schema(
        request=JudgeAddSerializer, responses={201: JudgeValidationRunSerializer, 202: JudgeValidationRunSerializer}
    )
    def post(self, request, project_pk):
        project = _project(project_pk)
        serializer = JudgeAddSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        endpoint = endpoint_by_id(serializer.validated_data["judge_endpoint"])
        if endpoint is None:
            raise Http404("No such endpoint.")
        rubric = _rubric(project, serializer.validated_data.get("rubric"))
        validation, run = judge_validation_add(project=project, endpoint=endpoint, rubric=rubric)
        validation.refresh_from_db()
        body = {**JudgeValidationSerializer(validation).data, "run": judge_run_state(validation)}
        if run is None:
            return Response(body, status=status.HTTP_201_CREATED)
        # Queued on a worker: 202 until its run is done (GET this URL for the progress of every judge).
        done = body["run"] and body["run"]["status"] == "done"
        return Response(body, status=status.HTTP_201_CREATED if done else status.HTTP_202_ACCEPTED)

    @extend_schema(responses=JudgeValidationRunSerializer(many=True))
    def get(self, request, project_pk):
        """Every judge of the project with the progress of its latest run."""
        project = _project(project_pk)
        return Response(
            [{**JudgeValidationSerializer(v).data, "run": judge_run_state(v)} for v in project_judges(project)]
        )


class ThresholdsAPIView(APIView):
    permission_classes = [IsResearcher]

    @extend_schema(request=ThresholdsSerializer, responses=ThresholdsSerializer)
    def put(self, request, validation_pk):
        validation = get_object_or_404(JudgeValidation, pk=validation_pk)
        serializer = ThresholdsSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        services.thresholds_set(validation=validation, **serializer.validated_data)
        return Response(serializer.validated_data)


class RecordAPIView(APIView):
    """Record the current verdicts: the audit's judge shows as validated on this rubric version."""

    permission_classes = [IsResearcher]

    @extend_schema(request=None, responses=JudgeValidationSerializer)
    def post(self, request, validation_pk):
        validation = get_object_or_404(JudgeValidation, pk=validation_pk)
        try:
            validation = services.validation_record(validation=validation, by=request.user)
        except SetupError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        return Response(JudgeValidationSerializer(validation).data)


class WorkshopAPIView(APIView):
    """Record a rubric-refinement workshop; it produces the next rubric version (201)."""

    permission_classes = [IsResearcher]

    @extend_schema(request=WorkshopSerializer, responses=WorkshopOutSerializer)
    def post(self, request, project_pk):
        project = _project(project_pk)
        serializer = WorkshopSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = dict(serializer.validated_data)
        from_rubric = _rubric(project, data.pop("from_rubric", None))
        try:
            workshop = services.workshop_record(project=project, from_rubric=from_rubric, by=request.user, **data)
        except SetupError as exc:
            raise ValidationError({"detail": str(exc)}) from exc
        return Response(WorkshopOutSerializer(workshop).data, status=status.HTTP_201_CREATED)


class PersonaAPIView(APIView):
    permission_classes = [IsResearcher]

    @extend_schema(request=PersonaSerializer, responses=PersonaResultSerializer)
    def post(self, request, project_pk):
        project = _project(project_pk)
        serializer = PersonaSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        changed = services.persona_visibility_set(project=project, hidden=serializer.validated_data["hidden"])
        return Response({"hide_persona_cue": serializer.validated_data["hidden"], "items_updated": changed})


class MRBenchImportAPIView(APIView):
    permission_classes = [IsResearcher]
    parser_classes = [MultiPartParser, FormParser, DepthBoundedJSONParser]

    @extend_schema(
        request=MRBenchImportSerializer,
        responses={201: MRBenchImportResultSerializer},
        parameters=[
            OpenApiParameter(
                "name", str, description="With a JSON body: the new project's name (default: the file's)."
            ),
            OpenApiParameter(
                "filename",
                str,
                description="With a JSON body: the file's name, kept with the import (default: request body).",
            ),
        ],
        description="The file as a multipart upload (`file`, optional `name`), or as the request body itself "
        "(Content-Type: application/json; `?name=` and `?filename=` optional).",
    )
    def post(self, request):
        if request.content_type.split(";")[0].strip().lower() == "application/json":
            # The published file sent as the body: read as sent (the reader refuses repeated keys, which a
            # parsed body would have lost), bounded like an upload.
            try:
                data = request.body
            except RequestDataTooBig:  # over DATA_UPLOAD_MAX_MEMORY_SIZE: said as for an upload
                raise ValidationError(
                    {
                        "file": [
                            f"The request body is over {settings.DATA_UPLOAD_MAX_MEMORY_SIZE} bytes "
                            "(DATA_UPLOAD_MAX_MEMORY_SIZE); send the file as a multipart upload (field file)."
                        ]
                    }
                ) from None
            too_large = upload_size_error("items", len(data))
            if too_large:
                raise ValidationError({"file": [too_large]})
            filename = str(request.query_params.get("filename") or "request body")[:200]
            name = str(request.query_params.get("name") or "")[:200]
        else:
            serializer = MRBenchImportSerializer(data=request.data)
            serializer.is_valid(raise_exception=True)
            upload = serializer.validated_data["file"]
            data, filename, name = upload.read(), upload.name, serializer.validated_data["name"]
        try:
            project = labelled_file_import(data=data, filename=filename, name=name, by=request.user)
        except MRBenchError as exc:
            raise ValidationError({"file": str(exc)}) from exc
        return Response(
            {
                "project": project.pk,
                "items": project_item_count(project),
                "import": project.options["import"],
                "warnings": project.options["import"]["warnings"],
                "options": project.options,
            },
            status=status.HTTP_201_CREATED,
        )


class AuditJudgeStatusAPIView(APIView):
    """The audit's judge status: validated on its rubric version (with verdicts), or not validated."""

    permission_classes = [IsResearcher]

    @extend_schema(parameters=[_RULE_PARAMETER], responses=AuditJudgeStatusSerializer)
    def get(self, request, audit_pk):
        audit = _audit(audit_pk)
        found = judge_validation_status(audit, rule=_rule(request))
        return Response(
            {
                "validated": found.validated,
                "verdict_rule": verdict_rule_info(found.rule),
                "text": found.text,
                "rubric": found.rubric_label,
                "recorded_at": found.recorded_at,
                "n_turns": found.n_turns,
                "verdicts": found.verdicts,
                "failed_metrics": found.failed_metrics,
                "validation": found.validation_id,
                "project": found.project_id,
            }
        )
