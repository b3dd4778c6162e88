"""Database ids from untrusted text, one rule for URL paths and query parameters: 1 to 18 digits.

Every primary key is a 64-bit integer (BigAutoField; PostgreSQL bigint, SQLite INTEGER), whose largest value has
19 digits: 18 digits always fit, so a path id that matches is never a database overflow (a 500) and one that
does not match is a 404 from the URL resolver. Registered once, as the path converter `id` (`<id:pk>`).
"""

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
