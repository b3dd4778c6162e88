"""EduFair Web project package: settings, Celery app, URLs, accounts and roles."""

from .celery import app as celery_app

__all__ = ("celery_app",)
