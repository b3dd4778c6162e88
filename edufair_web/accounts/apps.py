"""Accounts: roles as groups, the admin site for operators and researchers, API tokens, worker heartbeats."""

from django.apps import AppConfig
from django.contrib.admin import apps as admin_apps


class AccountsConfig(AppConfig):
    default = True
    name = "edufair_web.accounts"
    label = "accounts"
    verbose_name = "Accounts and workers"

    def ready(self) -> None:
        from . import signals, token_revocation  # noqa: F401  (the Celery worker heartbeat; tokens die with a password)


class EduFairAdminConfig(admin_apps.AdminConfig):
    default = False
    default_site = "edufair_web.accounts.admin_site.EduFairAdminSite"
