"""Database ids from untrusted text, one rule for URL paths, query parameters and form fields: 1 to 18 digits.

Every primary key is a 64-bit integer (BigAutoField; PostgreSQL bigint, SQLite INTEGER), whose largest value has
19 digits: 18 digits always fit, so a path id that matches is never a database overflow (a 500) and one that
does not match is a 404 from the URL resolver. Registered once, as the path converter `id` (`<id:pk>`).
"""

from django import forms
from django.core.exceptions import ValidationError as FormValidationError
from django.urls import register_converter
from rest_framework.exceptions import ValidationError

ID_REGEX = "[0-9]{1,18}"


class IdConverter:
    """`<id:name>`: a database id in a URL path (non-negative, at most 18 digits)."""

    regex = ID_REGEX

    def to_python(self, value: str) -> int:
        return int(value)

    def to_url(self, value: int | str) -> str:
        return str(value)


register_converter(IdConverter, "id")


def parse_id(value: str) -> int | None:
    """The id the text names, or None when it is not 1 to 18 digits (a negative, a float, a word, a huge number)."""
    value = value.strip()
    if len(value) > 18 or not value.isascii() or not value.isdigit():
        return None
    return int(value)


def query_id(params, name: str) -> int | None:
    """An optional id query parameter (`?stage=3`): None when absent or empty, a 400 naming it when not an id."""
    raw = params.get(name, "")
    if raw in ("", None):
        return None
    found = parse_id(str(raw))
    if found is None:
        raise ValidationError({name: "Expected an id (a whole number of at most 18 digits)."})
    return found


class IdModelMultipleChoiceField(forms.ModelMultipleChoiceField):
    """Django's ModelMultipleChoiceField, refusing a value that is not an id by the same rule before its `pk__in`
    query: Django bounds exact lookups but not `in`, so a 20-digit value was an OverflowError on SQLite (a 500)."""

    def _check_values(self, value):
        if not self.to_field_name:
            for pk in value if isinstance(value, list | tuple | set | frozenset) else ():
                if parse_id(str(pk)) is None:
                    raise FormValidationError(
                        self.error_messages["invalid_pk_value"], code="invalid_pk_value", params={"pk": pk}
                    )
        return super()._check_values(value)
