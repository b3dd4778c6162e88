"""API routes of audits, merged into the project's router under /api/."""

from rest_framework.routers import DefaultRouter

router = DefaultRouter()

# Audit engine: endpoints, audits (with launch/pause/resume/cancel/clone/progress actions), dialogues.
from audits.api.views_runs import AuditViewSet, DialogueViewSet, ModelEndpointViewSet  # noqa: E402

router.register("model-endpoints", ModelEndpointViewSet, basename="model-endpoint")
router.register("audits", AuditViewSet, basename="audit")
router.register("dialogues", DialogueViewSet, basename="dialogue")
