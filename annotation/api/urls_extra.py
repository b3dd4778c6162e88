"""API paths of annotation that are not viewsets (actions on one object, uploads), under /api/."""

urlpatterns: list = []
