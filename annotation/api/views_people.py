"""API views for people: users and invitations, stage enrolment, replacements and a stage's crowd link.

Look users up by username, create and invite them (a one-time link to set a password), deactivate them; enrol usernames
into a stage (all or nothing), mark replacements by username; and a stage's crowd entry link (settings, recruits by
pseudonym, and the researcher-only platform ids). The invitee may set their password through the API too, with the
link's two last path parts, and gets an API token back.

Researchers manage annotators and adjudicators; operators manage every role (`edufair_web.accounts.people`).
Enrolment, replacements and crowd links are research: researchers only."""

from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError as PasswordInvalid
from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.exceptions import ValidationError
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.models import CrowdLink, CrowdRecruit, Enrollment, Stage
from annotation.selectors.crowd import crowd_export_rows, crowd_link_of
from annotation.selectors.crowd_duplicates import recruits_with_duplicates
from annotation.services.crowd import CONFIG_FIELDS
from annotation.services.crowd_entry_settings import (
    ENTRY_FIELDS,
    MAX_APPROVED_BYTES,
    approved_count,
    crowd_link_save,
    link_signing_recipe,
    link_trust,
)
from annotation.services.enrollment import annotator_by_username, enrollment_bulk_create, enrollment_mark_replacement
from annotation.services.training import SetupError
from edufair_web.accounts.people import (
    PeopleError,
    invitation_accept,
    people_lookup,
    person_create,
    person_deactivate,
    person_invite_path,
    person_role,
)
from edufair_web.accounts.permissions import IsOperatorOrResearcher, IsResearcher
from edufair_web.accounts.roles import ROLES
from edufair_web.accounts.throttles import LoginRateThrottle
from edufair_web.accounts.tokens import api_token_issue

from .serializers_projects import EnrollmentSerializer


class PersonSerializer(serializers.ModelSerializer):
    role = serializers.SerializerMethodField()

    class Meta:
        model = User
        fields = ["id", "username", "email", "role", "is_active", "last_login"]

    def get_role(self, user) -> str:
        return person_role(user)


class PersonCreateSerializer(serializers.Serializer):
    username = serializers.CharField(max_length=150)
    email = serializers.EmailField(required=False, allow_blank=True)
    role = serializers.ChoiceField(choices=ROLES)


class InviteSerializer(serializers.Serializer):
    invite_url = serializers.URLField(
        help_text="The one-time page …/people/welcome/{uid}/{token}/; an API client posts the password to "
        "/api/annotation/people/welcome/{uid}/{token}/ instead."
    )
    expires_in_seconds = serializers.IntegerField()


class PersonInvitedSerializer(PersonSerializer):
    invite_url = serializers.CharField(read_only=True, help_text=InviteSerializer().fields["invite_url"].help_text)

    class Meta(PersonSerializer.Meta):
        fields = [*PersonSerializer.Meta.fields, "invite_url"]


class InvitationAcceptSerializer(serializers.Serializer):
    password = serializers.CharField(max_length=4096, trim_whitespace=False, style={"input_type": "password"})


class InvitationAcceptedSerializer(serializers.Serializer):
    username = serializers.CharField()
    token = serializers.CharField(help_text="Send as `Authorization: Token <token>`; shown once, stored as a digest.")
    expiry = serializers.DateTimeField(help_text="The token stops working at this time (API_TOKEN_TTL_HOURS).")


class BulkEnrolSerializer(serializers.Serializer):
    usernames = serializers.ListField(child=serializers.CharField(max_length=150), min_length=1, max_length=1000)
    subject = serializers.CharField(required=False, allow_blank=True, max_length=100, default="")


class ReplaceSerializer(serializers.Serializer):
    replacement = serializers.CharField(required=False, allow_blank=True, max_length=150, default="")
    note = serializers.CharField(required=False, allow_blank=True, max_length=500, default="")


class CrowdLinkSerializer(serializers.ModelSerializer):
    entry_url = serializers.SerializerMethodField()
    completion_url = serializers.CharField(
        read_only=True, help_text="Where a recruit who completed is sent, with ?cc=<code> added; empty: nowhere."
    )
    screened_out_url = serializers.CharField(
        read_only=True, help_text="Where a screened-out recruit is sent, with ?cc=<code> added; empty: nowhere."
    )
    not_consented_url = serializers.CharField(
        read_only=True,
        help_text="Where a recruit who does not consent (or leaves) is sent, with ?cc=<code> added; empty: nowhere.",
    )
    trusts = serializers.SerializerMethodField(help_text="Who can enter through the link, in plain words.")
    signing_recipe = serializers.SerializerMethodField(
        help_text="A Python one-liner that signs one participant's entry: HMAC-SHA256 of 'participant:study'."
    )
    approved_count = serializers.SerializerMethodField(help_text="Participant ids on the approved list.")

    class Meta:
        model = CrowdLink
        fields = [
            "stage",
            "entry_url",
            *CONFIG_FIELDS,
            *ENTRY_FIELDS,
            "entry_secret",
            "trusts",
            "signing_recipe",
            "approved_count",
        ]
        read_only_fields = fields

    def get_entry_url(self, link) -> str:
        return self.context["request"].build_absolute_uri(reverse("annotation:crowd-entry", args=[link.key]))

    def get_trusts(self, link) -> str:
        return link_trust(link)

    def get_signing_recipe(self, link) -> str:
        return link_signing_recipe(link)

    def get_approved_count(self, link) -> int:
        return approved_count(link)


class CrowdRecruitSerializer(serializers.ModelSerializer):
    pseudonym = serializers.CharField(source="user.username")
    possible_duplicate_of = serializers.ListField(
        child=serializers.CharField(),
        read_only=True,
        help_text="Pseudonyms of recruits that came from the same browser or client address.",
    )

    class Meta:
        model = CrowdRecruit
        fields = [
            "pseudonym",
            "created_at",
            "last_seen_at",
            "outcome",
            "finished_at",
            "released_at",
            "release_reason",
            "possible_duplicate_of",
        ]


CROWD_EXPORT_ROWS = inline_serializer(
    "CrowdExportRow",
    {
        "pseudonym": serializers.CharField(),
        "participant_id": serializers.CharField(),
        "study_id": serializers.CharField(),
        "session_id": serializers.CharField(),
        "visited_at": serializers.DateTimeField(),
        "outcome": serializers.CharField(),
    },
    many=True,
)


def _invite(request, user) -> dict:
    path = person_invite_path(by=request.user, user=user)
    return {"invite_url": request.build_absolute_uri(path), "expires_in_seconds": settings.PASSWORD_RESET_TIMEOUT}


class PeopleAPIView(APIView):
    permission_classes = [IsOperatorOrResearcher]

    @extend_schema(
        parameters=[OpenApiParameter("username", str, description="Part of a username (case-insensitive).")],
        responses=PersonSerializer(many=True),
    )
    def get(self, request):
        username = request.query_params.get("username", "")
        if len(username) > 150:
            raise ValidationError({"username": "At most 150 characters."})
        return Response(PersonSerializer(people_lookup(by=request.user, username=username), many=True).data)

    @extend_schema(request=PersonCreateSerializer, responses={201: PersonInvitedSerializer})
    def post(self, request):
        given = PersonCreateSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        try:
            user = person_create(by=request.user, **given.validated_data)
        except PeopleError as exc:
            raise ValidationError({"detail": str(exc)}) from exc
        data = {**PersonSerializer(user).data, "invite_url": _invite(request, user)["invite_url"]}
        return Response(data, status=status.HTTP_201_CREATED)


class PersonInviteAPIView(APIView):
    permission_classes = [IsOperatorOrResearcher]

    @extend_schema(request=None, responses=InviteSerializer)
    def post(self, request, user_pk):
        user = get_object_or_404(User, pk=user_pk)
        try:
            return Response(_invite(request, user))
        except PeopleError as exc:
            raise ValidationError({"detail": str(exc)}) from exc


class PersonDeactivateAPIView(APIView):
    permission_classes = [IsOperatorOrResearcher]

    @extend_schema(request=None, responses=PersonSerializer)
    def post(self, request, user_pk):
        user = get_object_or_404(User, pk=user_pk)
        try:
            return Response(PersonSerializer(person_deactivate(by=request.user, user=user)).data)
        except PeopleError as exc:
            raise ValidationError({"detail": str(exc)}) from exc


class InvitationAcceptAPIView(APIView):
    """The invitee sets their password through their one-time link (its two last path parts), as on the
    invitation page: Django's password validators apply and the link then stops working. The answer carries
    a new API token (as /api/auth/token/ gives). 400 for a link that is used, expired or unknown, or a
    password the validators refuse; throttled as log-ins are."""

    authentication_classes = ()  # the link is the credential; no session, so no CSRF token to carry
    permission_classes = (AllowAny,)
    throttle_classes = (LoginRateThrottle,)

    @extend_schema(request=InvitationAcceptSerializer, responses=InvitationAcceptedSerializer, auth=[])
    def post(self, request, uidb64, token):
        given = InvitationAcceptSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        try:
            user = invitation_accept(uidb64=uidb64, token=token, password=given.validated_data["password"])
        except PeopleError as exc:
            raise ValidationError({"detail": str(exc)}) from exc
        except PasswordInvalid as exc:
            raise ValidationError({"password": list(exc.messages)}) from exc
        instance, api_token = api_token_issue(user=user)
        return Response({"username": user.username, "token": api_token, "expiry": instance.expiry})


class StageEnrolAPIView(APIView):
    permission_classes = [IsResearcher]

    @extend_schema(request=BulkEnrolSerializer, responses={201: EnrollmentSerializer(many=True)})
    def post(self, request, stage_pk):
        stage = get_object_or_404(Stage, pk=stage_pk)
        given = BulkEnrolSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        usernames = list(dict.fromkeys(name.strip() for name in given.validated_data["usernames"]))
        try:
            enrolled = enrollment_bulk_create(stage=stage, usernames=usernames, subject=given.validated_data["subject"])
        except SetupError as exc:
            raise ValidationError({"usernames": str(exc)}) from exc
        return Response(
            EnrollmentSerializer(enrolled, many=True, context={"request": request}).data, status=status.HTTP_201_CREATED
        )


class EnrollmentReplaceAPIView(APIView):
    permission_classes = [IsResearcher]

    @extend_schema(request=ReplaceSerializer, responses=EnrollmentSerializer)
    def post(self, request, enrollment_pk):
        enrollment = get_object_or_404(Enrollment, pk=enrollment_pk)
        given = ReplaceSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        try:
            name = given.validated_data["replacement"].strip()
            replacement = annotator_by_username(name) if name else None
            replaced = enrollment_mark_replacement(
                enrollment=enrollment, replacement_user=replacement, note=given.validated_data["note"], by=request.user
            )
        except SetupError as exc:
            raise ValidationError({"detail": str(exc)}) from exc
        return Response(EnrollmentSerializer(replaced, context={"request": request}).data)


class CrowdLinkAPIView(APIView):
    """GET the stage's crowd link (404 when none), with whom it trusts; PUT opens it or changes its settings
    (is_open: false closes), its signed entries and approved list."""

    permission_classes = [IsResearcher]

    @extend_schema(responses=CrowdLinkSerializer)
    def get(self, request, stage_pk):
        stage = get_object_or_404(Stage, pk=stage_pk)
        link = get_object_or_404(CrowdLink, stage=stage)
        return Response(CrowdLinkSerializer(link, context={"request": request}).data)

    @extend_schema(
        request=inline_serializer(
            "CrowdLinkSettings",
            {
                "is_open": serializers.BooleanField(required=False),
                "max_recruits": serializers.IntegerField(required=False),
                "items_per_recruit": serializers.IntegerField(required=False),
                "estimated_minutes": serializers.IntegerField(
                    required=False, allow_null=True, help_text="Minutes a recruit is told the study takes; null: none."
                ),
                "pay_amount": serializers.DecimalField(
                    required=False,
                    allow_null=True,
                    max_digits=8,
                    decimal_places=2,
                    help_text="Pay a recruit is told they get on completion; null: not stated.",
                ),
                "pay_currency": serializers.CharField(required=False, max_length=3, help_text="e.g. GBP or USD."),
                # The bounds of annotation.models.CrowdLink's fields, which the service's full_clean enforces.
                "participant_param": serializers.CharField(required=False, max_length=64),
                "study_param": serializers.CharField(required=False, max_length=64),
                "session_param": serializers.CharField(required=False, max_length=64),
                "completion_url": serializers.CharField(required=False, allow_blank=True, max_length=500),
                "completion_code": serializers.CharField(required=False, max_length=64),
                "screened_out_url": serializers.CharField(required=False, allow_blank=True, max_length=500),
                "screened_out_code": serializers.CharField(required=False, max_length=64),
                "signature_required": serializers.BooleanField(required=False),
                "signature_param": serializers.CharField(required=False, max_length=64),
                "approved_only": serializers.BooleanField(required=False),
                "reservation_minutes": serializers.IntegerField(required=False),
                "approved_participants": serializers.CharField(
                    required=False,
                    allow_blank=True,
                    max_length=MAX_APPROVED_BYTES,
                    help_text="The platform's export (CSV with a 'Participant id' column) or one id per line (or a "
                    "JSON list of ids): replaces the approved list.",
                ),
                "rotate_secret": serializers.BooleanField(required=False, help_text="Draw a new signing secret."),
                "not_consented_url": serializers.CharField(required=False, allow_blank=True, max_length=500),
                "not_consented_code": serializers.CharField(required=False, max_length=64),
            },
        ),
        responses=CrowdLinkSerializer,
    )
    def put(self, request, stage_pk):
        """Each outcome (completed, screened out, not consented) has its own code, and they must differ; each its
        optional redirect URL."""
        stage = get_object_or_404(Stage, pk=stage_pk)
        if not isinstance(request.data, dict):
            raise ValidationError({"detail": "Send a JSON object of settings."})
        try:
            link = crowd_link_save(stage=stage, values=dict(request.data))
        except SetupError as exc:
            raise ValidationError({"detail": str(exc)}) from exc
        return Response(CrowdLinkSerializer(link, context={"request": request}).data)


class CrowdRecruitsAPIView(APIView):
    """The stage's crowd recruits by pseudonym."""

    permission_classes = [IsResearcher]

    @extend_schema(responses=CrowdRecruitSerializer(many=True))
    def get(self, request, stage_pk):
        stage = get_object_or_404(Stage, pk=stage_pk)
        return Response(CrowdRecruitSerializer(recruits_with_duplicates(stage), many=True).data)


class CrowdExportAPIView(APIView):
    """Every visit with the platform's raw ids (researchers only: they pay and message participants)."""

    permission_classes = [IsResearcher]

    @extend_schema(responses=CROWD_EXPORT_ROWS)
    def get(self, request, stage_pk):
        stage = get_object_or_404(Stage, pk=stage_pk)
        if crowd_link_of(stage) is None:
            return Response([])
        return Response(crowd_export_rows(stage))
