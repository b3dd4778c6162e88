"""Admin registrations for accounts: users and groups (re-registered for researchers) and heartbeats."""

from django.contrib import admin
from django.contrib.auth.admin import GroupAdmin, UserAdmin
from django.contrib.auth.models import Group, User
from rest_framework.authtoken.admin import TokenAdmin
from rest_framework.authtoken.models import TokenProxy

from .admin_site import ResearcherModelAdmin
from .models import WorkerHeartbeat


@admin.register(WorkerHeartbeat)
class WorkerHeartbeatAdmin(ResearcherModelAdmin):
    list_display = ("hostname", "started_at", "last_seen", "last_task_at")


class ResearcherUserAdmin(ResearcherModelAdmin, UserAdmin):
    pass


class ResearcherGroupAdmin(ResearcherModelAdmin, GroupAdmin):
    pass


class ResearcherTokenAdmin(ResearcherModelAdmin, TokenAdmin):
    pass


for model, model_admin in (
    (User, ResearcherUserAdmin),
    (Group, ResearcherGroupAdmin),
    (TokenProxy, ResearcherTokenAdmin),
):
    if admin.site.is_registered(model):
        admin.site.unregister(model)
    admin.site.register(model, model_admin)
