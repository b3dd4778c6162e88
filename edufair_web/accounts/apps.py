"""Accounts: roles as groups, the admin site for operators and researchers, API tokens, worker heartbeats."""

from django.apps import AppConfig
from django.contrib.admin import apps as admin_apps


class AccountsConfig(AppConfig):
    default = True
    name = "edufair_web.accounts"
    label = "accounts"
    verbose_name = "Accounts and workers"

    def ready(self) -> None:
        # The Celery worker heartbeat; tokens die with a password; no password for a crowd participant.
        from . import link_only, signals, token_revocation  # noqa: F401


class EduFairAdminConfig(admin_apps.AdminConfig):
    default = False
    default_site = "edufair_web.accounts.admin_site.EduFairAdminSite"
