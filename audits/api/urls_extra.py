"""API paths of audits that are not viewsets (actions on one object, uploads), under /api/."""

urlpatterns: list = []

# Fairness results: every table as JSON, the exports (CSV per table, JSON, self-contained HTML), and the
# judge-corrected table.
from django.urls import path  # noqa: E402

import edufair_web.converters  # noqa: E402, F401  (registers the <id:…> path converter)
from audits.api.views_results import (  # noqa: E402
    AuditExportAPIView,
    AuditJudgeCorrectedAPIView,
    AuditResultsAPIView,
)

urlpatterns += [
    path("audits/<id:pk>/results/", AuditResultsAPIView.as_view(), name="audit-results"),
    path("audits/<id:pk>/export/", AuditExportAPIView.as_view(), name="audit-export"),
    path("audits/<id:pk>/results/judge-corrected/", AuditJudgeCorrectedAPIView.as_view(), name="audit-judge-corrected"),
]
