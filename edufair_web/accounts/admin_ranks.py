"""Ranks in the admin: an operator changes only the users `people.may_manage` lets them manage, and grants no more.

A superuser keeps Django's full user and group admin. Anyone else who reaches the user admin (an operator) changes,
deletes, deactivates or sets the password of only the users `may_manage` allows (never themselves, never a
superuser: the password page is refused by the same check), sees no superuser, staff or permission fields in the
form they edit (fields left out of a form are not saved, even when posted), may choose only the role groups of
`manageable_roles`, and names the new user's role on the "add user" form. Groups carry permissions and their
names are the roles, so only a superuser adds, renames or deletes one.
"""

from __future__ import annotations

from django import forms
from django.contrib.auth.models import User

from .people import manageable_roles, may_manage
from .roles import ROLES, user_set_role, user_staff_follow_roles
from .selectors import role_groups, user_groups_outside

# Fields of Django's user form that only a superuser edits: they grant powers beyond any role.
SUPERUSER_FIELDS = frozenset({"is_staff", "is_superuser", "user_permissions"})


def within_rank(request, user: User | None) -> bool:
    """The admin's user (``request.user``) may change ``user`` (None: users in general, as on the change list)."""
    return user is None or request.user.is_superuser or may_manage(by=request.user, user=user)


def role_choices(by: User) -> list[tuple[str, str]]:
    return [(role, role) for role in ROLES if role in manageable_roles(by)]


class RankedUserAdmin:
    """Mixed in before Django's UserAdmin: object permissions by `may_manage`, forms without the superuser's
    fields, role groups within the operator's rank, and a role chosen when a user is added."""

    def has_change_permission(self, request, obj=None) -> bool:
        return super().has_change_permission(request, obj) and within_rank(request, obj)

    def has_delete_permission(self, request, obj=None) -> bool:
        return super().has_delete_permission(request, obj) and within_rank(request, obj)

    def get_fieldsets(self, request, obj=None):
        fieldsets = super().get_fieldsets(request, obj)
        if obj is None:
            return _with_role(fieldsets)
        if request.user.is_superuser or not self.has_change_permission(request, obj):
            return fieldsets  # to a superuser all, to others read-only: superuser status included, it says why
        return [
            (name, {**options, "fields": [f for f in options["fields"] if f not in SUPERUSER_FIELDS]})
            for name, options in fieldsets
        ]

    def get_form(self, request, obj=None, **kwargs):
        if obj is None:
            kwargs.setdefault("form", self.role_form(request))
        return super().get_form(request, obj, **kwargs)

    def role_form(self, request):
        """The "add user" form with the role to give: a class per request, since a declared field is shared by every
        subclass and its choices are the requesting user's."""
        superuser = request.user.is_superuser
        choices = role_choices(request.user)
        role = forms.ChoiceField(
            choices=[("", "(no role)"), *choices] if superuser else choices,
            required=not superuser,
            help_text="The user's role, among those you may give.",
        )
        return type(self.add_form.__name__, (self.add_form,), {"role": role})

    def formfield_for_manytomany(self, db_field, request=None, **kwargs):
        if db_field.name == "groups" and not request.user.is_superuser:
            kwargs["queryset"] = role_groups(names=manageable_roles(request.user))
        return super().formfield_for_manytomany(db_field, request, **kwargs)

    def save_related(self, request, form, formsets, change) -> None:
        user = form.instance
        offered = form.fields["groups"].queryset if "groups" in form.fields else None
        # Groups the operator was not offered (outside their rank) stay as they were: the form would drop them.
        kept = user_groups_outside(user=user, offered=offered) if change and offered is not None else []
        super().save_related(request, form, formsets, change)
        if kept:
            user.groups.add(*kept)
        if not change and form.cleaned_data.get("role"):
            user_set_role(user=user, role=form.cleaned_data["role"])
        elif change and not request.user.is_superuser and "groups" in form.changed_data:
            user_staff_follow_roles(user=user)


def _with_role(add_fieldsets):
    (name, options), *rest = add_fieldsets
    return [(name, {**options, "fields": [*options["fields"], "role"]}), *rest]


class RankedGroupAdmin:
    """Mixed in before Django's GroupAdmin: others than superusers see the groups and change none."""

    def has_add_permission(self, request) -> bool:
        return request.user.is_superuser and super().has_add_permission(request)

    def has_change_permission(self, request, obj=None) -> bool:
        return request.user.is_superuser and super().has_change_permission(request, obj)

    def has_delete_permission(self, request, obj=None) -> bool:
        return request.user.is_superuser and super().has_delete_permission(request, obj)
