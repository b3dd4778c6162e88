"""Query parameters of the API: their OpenAPI declarations and the one reading of a fixed-choice value.

How an id filter and a fixed-choice filter are declared for the schema, and the filters several endpoints share
(declared once here).

An id in a query is read by `edufair_web.converters.query_id` (a 400 naming the parameter when it is not an id) and
has the schema of an id in a path. A value outside a fixed set is a 400 naming the parameter and its values, as a
malformed id is, never an empty list that a misspelling would also give.
"""

from collections.abc import Collection

from django.conf import settings
from drf_spectacular.utils import OpenApiParameter
from rest_framework.exceptions import ValidationError

# The `id` path converter's schema (settings.SPECTACULAR_SETTINGS): 0 to 10**18 - 1, the 1-to-18-digit rule.
ID_SCHEMA = settings.SPECTACULAR_SETTINGS["PATH_CONVERTER_OVERRIDES"]["id"]


def id_parameter(name: str, description: str) -> OpenApiParameter:
    """An optional id query parameter, `?name=3`."""
    return OpenApiParameter(name, dict(ID_SCHEMA), description=description)


def choice_parameter(name: str, choices: Collection[str], description: str) -> OpenApiParameter:
    """An optional query parameter whose value is one of `choices` (read with `query_choice`)."""
    return OpenApiParameter(name, str, enum=list(choices), description=description)


def choice_refusal(params, name: str, choices: Collection[str]) -> str | None:
    """Why an optional fixed-choice query parameter cannot be read ("One of a, b."), or None when it is absent, empty
    or one of `choices`. The API raises it as a 400 (`query_choice`); a page answers it as a 400 of its own."""
    raw = params.get(name, "")
    if raw in ("", None) or raw in choices:
        return None
    return f"One of {', '.join(choices)}."


def query_choice(params, name: str, choices: Collection[str]) -> str | None:
    """An optional query parameter with a fixed set of values: None when absent or empty, a 400 naming it otherwise."""
    refusal = choice_refusal(params, name, choices)
    if refusal:
        raise ValidationError({name: refusal})
    return params.get(name) or None


PROJECT_FILTER = id_parameter("project", "Only those of the project with this id.")
STAGE_FILTER = id_parameter("stage", "Only those of the stage with this id.")
