"""Admin registrations of the operators' models.

Operators get users (those they may manage, `admin_ranks`), groups (to see), API tokens (never readable), lockouts and
worker heartbeats. A crowd participant's password page refuses (`link_only`)."""

from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.contrib.auth.models import Group, User
from django.shortcuts import redirect
from knox.models import AuthToken

from .admin_ranks import RankedGroupAdmin, RankedUserAdmin
from .admin_site import OperatorModelAdmin, ResearcherModelAdmin
from .link_only import LINK_ONLY, signs_in_by_link_only
from .models import WorkerHeartbeat


@admin.register(WorkerHeartbeat)
class WorkerHeartbeatAdmin(OperatorModelAdmin):
    list_display = ("hostname", "started_at", "last_seen", "last_task_at")


class ApiTokenAdmin(OperatorModelAdmin):
    """Who holds which token until when, to revoke one; only a digest is stored, and not even that is shown.
    Tokens are obtained with a password (/api/auth/token/), never made here."""

    list_display = ("token_key", "user", "created", "expiry")
    list_filter = ("expiry",)
    search_fields = ("user__username", "token_key")
    fields = ("token_key", "user", "created", "expiry")
    readonly_fields = fields

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


class LinkOnlyPasswordRefusal:
    """The user admin's password page refuses a crowd participant (who signs in through the study link only)."""

    def user_change_password(self, request, id, form_url=""):
        user = self.get_object(request, unquote(id))
        if user is not None and self.has_change_permission(request, user) and signs_in_by_link_only(user):
            messages.error(request, f"{user.username}: {LINK_ONLY}.")
            return redirect("admin:auth_user_change", user.pk)
        return super().user_change_password(request, id, form_url)


def operator_admin_for_registered_models() -> None:
    """Give operators the admins that apps listed before this one registered (auth, axes); knox's token admin
    (which lists digests and makes tokens) is replaced by ApiTokenAdmin.

    Each keeps its own admin class first, so its own restrictions stand (axes' logs stay read-only);
    the permissions it does not define come from OperatorModelAdmin's role check. Users and groups are ranked
    before that (`admin_ranks`): an operator changes only whom they may manage, and no group.
    """
    if admin.site.is_registered(AuthToken):
        admin.site.unregister(AuthToken)
    admin.site.register(AuthToken, ApiTokenAdmin)
    for model, model_admin in list(admin.site._registry.items()):
        if isinstance(model_admin, OperatorModelAdmin | ResearcherModelAdmin):
            continue
        bases = (type(model_admin), OperatorModelAdmin)
        if model is User:
            bases = (LinkOnlyPasswordRefusal, RankedUserAdmin, *bases)
        elif model is Group:
            bases = (RankedGroupAdmin, *bases)
        combined = type(f"Operator{type(model_admin).__name__}", bases, {})
        admin.site.unregister(model)
        admin.site.register(model, combined)


operator_admin_for_registered_models()
