"""Role checks for pages (view mixins) and the API (DRF permission classes), used everywhere."""

from django.contrib.auth.mixins import AccessMixin
from rest_framework.permissions import BasePermission

from .roles import ADJUDICATOR, ANNOTATOR, OPERATOR, RESEARCHER, has_role


class RoleRequiredMixin(AccessMixin):
    """Anonymous users go to the login page; signed-in users without one of `roles` get 403."""

    roles: tuple[str, ...] = ()
    raise_exception = False

    def dispatch(self, request, *args, **kwargs):
        if not request.user.is_authenticated:
            return self.handle_no_permission()
        if not has_role(request.user, *self.roles):
            self.raise_exception = True
            return self.handle_no_permission()
        return super().dispatch(request, *args, **kwargs)


class ResearcherRequiredMixin(RoleRequiredMixin):
    roles = (RESEARCHER,)


class OperatorOrResearcherRequiredMixin(RoleRequiredMixin):
    """The state of the installation (the system page): who runs it, and who runs research on it."""

    roles = (OPERATOR, RESEARCHER)


class AdjudicatorRequiredMixin(RoleRequiredMixin):
    roles = (ADJUDICATOR, RESEARCHER)


class AnnotatorRequiredMixin(RoleRequiredMixin):
    roles = (ANNOTATOR, ADJUDICATOR, RESEARCHER)


class _RolePermission(BasePermission):
    roles: tuple[str, ...] = ()
    message = "Your role does not allow this."

    def has_permission(self, request, view) -> bool:
        return bool(request.user and request.user.is_authenticated and has_role(request.user, *self.roles))


class IsResearcher(_RolePermission):
    roles = (RESEARCHER,)


class IsAdjudicator(_RolePermission):
    """Adjudicators, and researchers who run the project."""

    roles = (ADJUDICATOR, RESEARCHER)


class IsAnnotator(_RolePermission):
    """Anyone who labels: annotators, and adjudicators or researchers trying the task."""

    roles = (ANNOTATOR, ADJUDICATOR, RESEARCHER)


class IsOperatorOrResearcher(_RolePermission):
    """People: researchers (annotators and adjudicators) and operators (every role)."""

    roles = (OPERATOR, RESEARCHER)
