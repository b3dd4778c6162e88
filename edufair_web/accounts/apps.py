"""Accounts: roles as groups, the admin site that only researchers may enter, worker heartbeats."""

from django.apps import AppConfig
from django.contrib.admin import apps as admin_apps


class AccountsConfig(AppConfig):
    default = True
    name = "edufair_web.accounts"
    label = "accounts"
    verbose_name = "Accounts and workers"

    def ready(self) -> None:
        from . import signals  # noqa: F401  (connects the Celery worker heartbeat)


class EduFairAdminConfig(admin_apps.AdminConfig):
    default = False
    default_site = "edufair_web.accounts.admin_site.ResearcherAdminSite"
