"""The admin site: researchers only. Other signed-in users get 403 rather than a second login form."""

from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.db import models

from .roles import RESEARCHER, has_role


class ResearcherAdminSite(admin.AdminSite):
    site_header = "EduFair Web administration"
    site_title = "EduFair Web admin"

    def has_permission(self, request) -> bool:
        return request.user.is_active and has_role(request.user, RESEARCHER)

    def admin_view(self, view, cacheable=False):
        wrapped = super().admin_view(view, cacheable)

        def guarded(request, *args, **kwargs):
            if request.user.is_authenticated and not self.has_permission(request):
                raise PermissionDenied("The admin site is for researchers.")
            return wrapped(request, *args, **kwargs)

        guarded.__wrapped__ = wrapped
        return guarded

    def login(self, request, extra_context=None):
        if request.user.is_authenticated and not self.has_permission(request):
            raise PermissionDenied("The admin site is for researchers.")
        return super().login(request, extra_context)


class ResearcherModelAdmin(admin.ModelAdmin):
    """Base for every model's admin: researchers may view and edit everything the app stores."""

    # A URL typed without a scheme is taken as https (Django 6's default; said explicitly now).
    formfield_overrides = {models.URLField: {"assume_scheme": "https"}}

    def has_module_permission(self, request) -> bool:
        return has_role(request.user, RESEARCHER)

    def has_view_permission(self, request, obj=None) -> bool:
        return has_role(request.user, RESEARCHER)

    def has_add_permission(self, request) -> bool:
        return has_role(request.user, RESEARCHER)

    def has_change_permission(self, request, obj=None) -> bool:
        return has_role(request.user, RESEARCHER)

    def has_delete_permission(self, request, obj=None) -> bool:
        return has_role(request.user, RESEARCHER)
