"""API paths of audits that are not viewsets (actions on one object, uploads), under /api/."""

urlpatterns: list = []

# Fairness results: every table as JSON, and the exports (CSV per table, JSON, self-contained HTML).
from django.urls import path  # noqa: E402

import edufair_web.converters  # noqa: E402, F401  (registers the <id:…> path converter)
from audits.api.views_results import AuditExportAPIView, AuditResultsAPIView  # noqa: E402

urlpatterns += [
    path("audits/<id:pk>/results/", AuditResultsAPIView.as_view(), name="audit-results"),
    path("audits/<id:pk>/export/", AuditExportAPIView.as_view(), name="audit-export"),
]
