"""Admin registrations for accounts: heartbeats, and researcher access to users, groups, tokens and lockouts."""

from django.contrib import admin

from .admin_site import ResearcherModelAdmin
from .models import WorkerHeartbeat


@admin.register(WorkerHeartbeat)
class WorkerHeartbeatAdmin(ResearcherModelAdmin):
    list_display = ("hostname", "started_at", "last_seen", "last_task_at")


def researcher_admin_for_registered_models() -> None:
    """Give researchers the admins that apps listed before this one registered (auth, tokens, axes).

    Each keeps its own admin class first, so its own restrictions stand (axes' logs stay read-only);
    the permissions it does not define come from ResearcherModelAdmin's role check.
    """
    for model, model_admin in list(admin.site._registry.items()):
        if isinstance(model_admin, ResearcherModelAdmin):
            continue
        combined = type(f"Researcher{type(model_admin).__name__}", (type(model_admin), ResearcherModelAdmin), {})
        admin.site.unregister(model)
        admin.site.register(model, combined)


researcher_admin_for_registered_models()
