"""API routes of audits, merged into the project's router under /api/."""

from rest_framework.routers import DefaultRouter

router = DefaultRouter()
