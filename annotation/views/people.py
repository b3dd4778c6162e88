"""People pages: users and invitations, enrolment, replacements and a stage's crowd link.

Researchers and operators create, look up, invite and deactivate users (each within the roles they manage); researchers
enrol annotators into a stage by username, mark replacements and run the stage's crowd entry link. The invitee's page
where a one-time link sets a password is Django's password-reset page."""

from __future__ import annotations

import csv
import io

from django.contrib import messages
from django.contrib.auth import views as auth_views
from django.contrib.auth.models import User
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse, reverse_lazy
from django.views import View

from annotation.forms_people import BulkEnrolForm, CrowdLinkForm, PersonCreateForm, ReplaceByUsernameForm
from annotation.models import Enrollment, Stage
from annotation.selectors.crowd import crowd_link_of
from annotation.selectors.crowd_duplicates import recruits_with_duplicates
from annotation.selectors.crowd_outcomes import OUTCOME_COLUMNS, crowd_outcome_rows
from annotation.selectors.projects import enrolment_stages, stage_recruits
from annotation.services.crowd import crowd_new_codes
from annotation.services.crowd_entry_settings import approved_count, crowd_link_save, link_signing_recipe, link_trust
from annotation.services.enrollment import (
    annotator_by_username,
    enrollment_bulk_create,
    enrollment_mark_replacement,
    usernames_parse,
)
from annotation.services.training import SetupError
from edufair_web.accounts.link_only import LINK_ONLY, signs_in_by_link_only
from edufair_web.accounts.people import (
    PeopleError,
    manageable_roles,
    may_invite,
    may_manage,
    people_lookup,
    person_create,
    person_deactivate,
    person_invite_path,
    person_role,
)
from edufair_web.accounts.permissions import OperatorOrResearcherRequiredMixin, ResearcherRequiredMixin
from edufair_web.accounts.roles import RESEARCHER, has_role
from edufair_web.csv_cells import neutralise_cell


class PeopleView(OperatorOrResearcherRequiredMixin, View):
    """Look people up by username and create new ones (the invitation link is shown once, to pass on)."""

    def render_page(self, request, form, status=200, invite_url=""):
        query = request.GET.get("q", "")[:150]
        rows = [
            {
                "user": user,
                "role": person_role(user),
                "manageable": may_manage(by=request.user, user=user),
                "invitable": may_invite(by=request.user, user=user),
            }
            for user in people_lookup(by=request.user, username=query)
        ]
        stages = enrolment_stages() if has_role(request.user, RESEARCHER) else []
        context = {"form": form, "rows": rows, "query": query, "stages": stages, "invite_url": invite_url}
        return render(request, "annotation/people/people.html", context, status=status)

    def get(self, request):
        return self.render_page(request, PersonCreateForm(roles=manageable_roles(request.user)))

    def post(self, request):
        form = PersonCreateForm(request.POST, roles=manageable_roles(request.user))
        if not form.is_valid():
            return self.render_page(request, form, status=400)
        try:
            user = person_create(by=request.user, **form.cleaned_data)
        except PeopleError as exc:
            form.add_error(None, str(exc))
            return self.render_page(request, form, status=400)
        invite_url = request.build_absolute_uri(person_invite_path(by=request.user, user=user))
        messages.success(request, f"{user.username} created. Send them the invitation link below.")
        return self.render_page(request, PersonCreateForm(roles=manageable_roles(request.user)), invite_url=invite_url)


class PersonInviteView(OperatorOrResearcherRequiredMixin, View):
    def post(self, request, pk):
        user = get_object_or_404(User, pk=pk)
        try:
            path = person_invite_path(by=request.user, user=user)
        except PeopleError as exc:
            messages.error(request, str(exc))
            return redirect("annotation:people")
        messages.success(request, f"Invitation link for {user.username}: {request.build_absolute_uri(path)}")
        return redirect(f"{reverse('annotation:people')}?q={user.username}")


class PersonDeactivateView(OperatorOrResearcherRequiredMixin, View):
    def post(self, request, pk):
        user = get_object_or_404(User, pk=pk)
        try:
            person_deactivate(by=request.user, user=user)
            messages.success(request, f"{user.username} is deactivated.")
        except PeopleError as exc:
            messages.error(request, str(exc))
        return redirect("annotation:people")


class InviteAcceptView(auth_views.PasswordResetConfirmView):
    """The invitee chooses a password (Django's validators) and is signed in; the link then stops working."""

    template_name = "annotation/people/invite_accept.html"
    post_reset_login = True
    post_reset_login_backend = "django.contrib.auth.backends.ModelBackend"
    success_url = reverse_lazy("home")

    link_only = False

    def get_user(self, uidb64):
        user = super().get_user(uidb64)
        if user is not None and signs_in_by_link_only(user):  # a link made before they were refused invitations
            self.link_only = True
            return None
        return user if user is not None and user.is_active else None

    def get_context_data(self, **kwargs):
        return {**super().get_context_data(**kwargs), "link_only": LINK_ONLY if self.link_only else ""}


def _drawn(link) -> dict | None:
    return crowd_new_codes() if link is None else None


def _csv_text(value):
    return value.isoformat() if hasattr(value, "isoformat") else value


def _stage_people_context(stage: Stage, *, request, **forms) -> dict:
    link = crowd_link_of(stage)
    crowd_url = ""
    if link is not None:
        # Prolific's placeholders: the platform puts each participant's ids in their place.
        entry = request.build_absolute_uri(reverse("annotation:crowd-entry", args=[link.key]))
        crowd_url = (
            f"{entry}?{link.participant_param}={{{{%PROLIFIC_PID%}}}}"
            f"&{link.study_param}={{{{%STUDY_ID%}}}}&{link.session_param}={{{{%SESSION_ID%}}}}"
        )
        if link.signature_required:  # the researcher's recruiting page adds the signature, never the platform
            crowd_url += f"&{link.signature_param}=<signature>"
    enrollments = stage_recruits(stage)
    return {
        "stage": stage,
        "project": stage.project,
        "enrollments": enrollments,
        "enrol_form": forms.get("enrol_form") or BulkEnrolForm(),
        "replace_form": ReplaceByUsernameForm(),
        "crowd_link": link,
        # A new link's form comes with three different codes drawn, to keep or replace.
        "crowd_form": forms.get("crowd_form") or CrowdLinkForm(instance=link, initial=_drawn(link)),
        "outcomes": crowd_outcome_rows(stage),
        "recruits": recruits_with_duplicates(stage),
        "crowd_url": crowd_url,
        "crowd_trust": link_trust(link) if link else "",
        "crowd_recipe": link_signing_recipe(link) if link else "",
        "crowd_approved": approved_count(link) if link else 0,
    }


class StagePeopleView(ResearcherRequiredMixin, View):
    """A stage's people: bulk enrolment by username (all or nothing), replacements, the crowd entry link."""

    def get(self, request, stage_pk):
        stage = get_object_or_404(Stage.objects.select_related("project"), pk=stage_pk)
        context = _stage_people_context(stage, request=request)
        return render(request, "annotation/people/stage_people.html", context)

    def post(self, request, stage_pk):
        stage = get_object_or_404(Stage.objects.select_related("project"), pk=stage_pk)
        form = BulkEnrolForm(request.POST)
        if form.is_valid():
            try:
                enrolled = enrollment_bulk_create(
                    stage=stage,
                    usernames=usernames_parse(form.cleaned_data["usernames"]),
                    subject=form.cleaned_data["subject"],
                )
                messages.success(request, f"{len(enrolled)} enrolled: {', '.join(e.user.username for e in enrolled)}.")
                return redirect("annotation:stage-people", stage.pk)
            except SetupError as exc:
                form.add_error("usernames", str(exc))
        context = _stage_people_context(stage, request=request, enrol_form=form)
        return render(request, "annotation/people/stage_people.html", context, status=400)


class StageReplaceView(ResearcherRequiredMixin, View):
    def post(self, request, pk):
        enrollment = get_object_or_404(Enrollment.objects.select_related("user"), pk=pk)
        form = ReplaceByUsernameForm(request.POST)
        if not form.is_valid():
            messages.error(request, "The replacement form was not valid.")
            return redirect("annotation:stage-people", enrollment.stage_id)
        try:
            name = form.cleaned_data["replacement"].strip()
            replacement = annotator_by_username(name) if name else None
            enrollment_mark_replacement(
                enrollment=enrollment, replacement_user=replacement, note=form.cleaned_data["note"], by=request.user
            )
            messages.success(request, f"{enrollment.user.username} marked as replaced.")
        except SetupError as exc:
            messages.error(request, str(exc))
        return redirect("annotation:stage-people", enrollment.stage_id)


class CrowdLinkConfigureView(ResearcherRequiredMixin, View):
    """Open the stage's crowd entry link, change its settings, or close it (the is_open box)."""

    def post(self, request, stage_pk):
        stage = get_object_or_404(Stage.objects.select_related("project"), pk=stage_pk)
        form = CrowdLinkForm(request.POST, request.FILES, instance=crowd_link_of(stage))
        if form.is_valid():
            try:
                crowd_link_save(stage=stage, values=form.settings())
                messages.success(request, "Crowd entry link saved.")
                return redirect("annotation:stage-people", stage.pk)
            except SetupError as exc:
                form.add_error(None, str(exc))
        context = _stage_people_context(stage, request=request, crowd_form=form)
        return render(request, "annotation/people/stage_people.html", context, status=400)


class CrowdExportView(ResearcherRequiredMixin, View):
    """The outcome list with the participants' raw platform ids (researchers only), one row per participant, as CSV:
    what the researcher needs to approve, reject or pay each one on the platform."""

    def get(self, request, stage_pk):
        stage = get_object_or_404(Stage, pk=stage_pk)
        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=OUTCOME_COLUMNS)
        writer.writeheader()
        for row in crowd_outcome_rows(stage):
            writer.writerow({key: neutralise_cell(_csv_text(value)) for key, value in row.items()})
        response = HttpResponse(out.getvalue(), content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="stage-{stage.pk}-crowd.csv"'
        return response
