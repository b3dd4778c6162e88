"""Fields a row takes only when it is created (the model's FIXED_AFTER_CREATE): an update that changes one is refused.

A model names them once (`FIXED_AFTER_CREATE = ("stage",)`); the API's serializers refuse a PUT or PATCH that changes
one with a 400 naming the field, and the admin shows them read-only on an existing row. Sending the value a row
already has is no change (a PUT repeats every field).
"""

from __future__ import annotations

from collections.abc import Mapping

from django.db import models
from rest_framework import serializers


def fixed_fields(model: type[models.Model]) -> tuple[str, ...]:
    return tuple(getattr(model, "FIXED_AFTER_CREATE", ()))


def _current(instance: models.Model, name: str):
    field = instance._meta.get_field(name)
    if field.is_relation and field.many_to_one:
        return getattr(instance, field.attname)  # the id: no query for the related row
    return getattr(instance, name)


def _given(value):
    return value.pk if isinstance(value, models.Model) else value


def fixed_field_changes(instance: models.Model | None, values: Mapping) -> dict[str, str]:
    """Field → why not, for each field fixed after creation that ``values`` would change on a stored ``instance``."""
    if instance is None or instance.pk is None:
        return {}
    label = instance._meta.verbose_name
    return {
        name: f"Set when the {label} is created; it cannot change (create a new {label} instead)."
        for name in fixed_fields(type(instance))
        if name in values and _given(values[name]) != _current(instance, name)
    }


class FixedAfterCreateSerializer(serializers.ModelSerializer):
    """A model serializer whose update refuses a change of the model's fields fixed after creation."""

    FIXED_NOTE = "Set at creation: an update that changes it is refused."

    def get_fields(self) -> dict:
        """Each fixed field says so in the schema, so a client knows before it tries."""
        fields = super().get_fields()
        for name in fixed_fields(self.Meta.model):
            field = fields.get(name)
            if field is not None and not field.read_only:
                field.help_text = f"{field.help_text} {self.FIXED_NOTE}" if field.help_text else self.FIXED_NOTE
        return fields

    def validate(self, attrs: dict) -> dict:
        refused = fixed_field_changes(self.instance, attrs)
        if refused:
            raise serializers.ValidationError(refused)
        return super().validate(attrs)

    def merged(self, attrs: dict, *names: str) -> dict:
        """``names`` as the row would hold them after this write: the request's values over the stored ones."""
        return {name: attrs[name] if name in attrs else getattr(self.instance, name, None) for name in names}


class FixedAfterCreateAdmin:
    """An admin mixin: the model's fields fixed after creation are read-only on an existing row."""

    def get_readonly_fields(self, request, obj=None):
        fields = tuple(super().get_readonly_fields(request, obj))
        if obj is None:
            return fields
        return (*fields, *(name for name in fixed_fields(self.model) if name not in fields))
