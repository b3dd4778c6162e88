"""API paths of audits that are not viewsets (actions on one object, uploads), under /api/."""

urlpatterns: list = []
