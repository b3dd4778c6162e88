"""URL map: pages of each app, the API under /api/, the schema and its docs, admin, /healthz."""

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from drf_spectacular.views import SpectacularSwaggerSplitView
from rest_framework.routers import DefaultRouter

from annotation.api.urls import router as annotation_router
from audits.api.urls import router as audits_router
from edufair_web.accounts.api.views import (
    ApiTokenDetailView,
    ApiTokenListView,
    TokenObtainView,
    WorkerHeartbeatViewSet,
    me,
)
from edufair_web.accounts.schema import CachedSchemaView
from edufair_web.accounts.views import FaviconView, HomeView, LoginView, SystemView, healthz

router = DefaultRouter()
router.register("workers", WorkerHeartbeatViewSet, basename="worker")
router.registry.extend(audits_router.registry)
router.registry.extend(annotation_router.registry)

urlpatterns = [
    path("", HomeView.as_view(), name="home"),
    path("healthz", healthz, name="healthz"),
    path("favicon.ico", FaviconView.as_view(), name="favicon"),
    path("system/", SystemView.as_view(), name="system"),
    path("accounts/login/", LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("audits/", include("audits.urls")),
    path("annotation/", include("annotation.urls")),
    path("admin/", admin.site.urls),
    path("api/me/", me, name="api-me"),
    path("api/auth/token/", TokenObtainView.as_view(), name="api-token"),
    path("api/auth/tokens/", ApiTokenListView.as_view(), name="api-tokens"),
    path("api/auth/tokens/<str:token_key>/", ApiTokenDetailView.as_view(), name="api-token-detail"),
    path("api/schema/", CachedSchemaView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerSplitView.as_view(url_name="schema"), name="swagger-ui"),
    path("api/", include("audits.api.urls_extra")),
    path("api/", include("annotation.api.urls_extra")),
    path("api/", include(router.urls)),
]
