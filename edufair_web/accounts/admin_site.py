"""The admin site, where operators and researchers each see their own models.

Operators see users, API tokens, lockouts and workers; researchers see the research data. Other signed-in users get 403
rather than a second login form."""

from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.db import models

from edufair_web.converters import IdModelMultipleChoiceField
from edufair_web.json_input import DepthBoundedDecoder

from .roles import OPERATOR, RESEARCHER, has_role


class EduFairAdminSite(admin.AdminSite):
    site_header = "EduFair Web administration"
    site_title = "EduFair Web admin"

    def has_permission(self, request) -> bool:
        return request.user.is_active and has_role(request.user, OPERATOR, RESEARCHER)

    def admin_view(self, view, cacheable=False):
        wrapped = super().admin_view(view, cacheable)

        def guarded(request, *args, **kwargs):
            if request.user.is_authenticated and not self.has_permission(request):
                raise PermissionDenied("The admin site is for operators and researchers.")
            return wrapped(request, *args, **kwargs)

        guarded.__wrapped__ = wrapped
        return guarded

    def login(self, request, extra_context=None):
        if request.user.is_authenticated and not self.has_permission(request):
            raise PermissionDenied("The admin site is for operators and researchers.")
        return super().login(request, extra_context)


class _RoleModelAdmin(admin.ModelAdmin):
    """A model's admin open to the holders of `admin_roles` only; the others get 403 on its pages."""

    admin_roles: tuple[str, ...] = ()
    # A URL typed without a scheme is taken as https (Django 6's default; said explicitly now); JSON nested too
    # deeply or holding a number of thousands of digits, and a many-to-many choice that is not an id (a 20-digit
    # one overflowed SQLite), are form errors, not 500s.
    formfield_overrides = {
        models.URLField: {"assume_scheme": "https"},
        models.JSONField: {"decoder": DepthBoundedDecoder},
        models.ManyToManyField: {"form_class": IdModelMultipleChoiceField},
    }

    def _allowed(self, request) -> bool:
        return has_role(request.user, *self.admin_roles)

    def has_module_permission(self, request) -> bool:
        return self._allowed(request)

    def has_view_permission(self, request, obj=None) -> bool:
        return self._allowed(request)

    def has_add_permission(self, request) -> bool:
        return self._allowed(request)

    def has_change_permission(self, request, obj=None) -> bool:
        return self._allowed(request)

    def has_delete_permission(self, request, obj=None) -> bool:
        return self._allowed(request)


class ResearcherModelAdmin(_RoleModelAdmin):
    """Base for every research model's admin: researchers may view and edit everything the apps store."""

    admin_roles = (RESEARCHER,)


class OperatorModelAdmin(_RoleModelAdmin):
    """Base for the installation's models (users, groups, API tokens, lockouts, worker heartbeats): operators."""

    admin_roles = (OPERATOR,)
