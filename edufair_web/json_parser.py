"""Depth-bounded JSON for the API: a parser and a JSONField that answer JSON nested too deep with a 400, never a 500.

This is json_input's rule, for request bodies (the parser) and the JSON text of form fields (every serializer JSONField,
model serializers' included): deeper than MAX_DEPTH is a 400.

The body's size is bounded before the parser runs: DRF hands JSON parsers `request.body`, which Django refuses
(400) over DATA_UPLOAD_MAX_MEMORY_SIZE.
"""

import io

from django.db import models
from rest_framework import serializers
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

from edufair_web.json_input import MAX_DEPTH, DepthBoundedDecoder, nesting_depth


class DepthBoundedJSONParser(JSONParser):
    """A deep body would otherwise raise RecursionError inside json.load, which DRF does not catch (a 500)."""

    def parse(self, stream, media_type=None, parser_context=None):
        body = stream.read() if stream is not None else b""
        if nesting_depth(body, MAX_DEPTH) > MAX_DEPTH:
            raise ParseError(f"JSON parse error - the JSON is nested too deeply (more than {MAX_DEPTH} levels)")
        return super().parse(io.BytesIO(body), media_type, parser_context)


class DepthBoundedJSONField(serializers.JSONField):
    """DRF's JSONField parses a multipart or form value as JSON text, where a deep one was a RecursionError."""

    def __init__(self, **kwargs):
        if kwargs.get("decoder") is None:  # model serializers pass the model field's decoder, None by default
            kwargs["decoder"] = DepthBoundedDecoder
        super().__init__(**kwargs)


# Model serializers build a model JSONField's serializer field from this mapping (DRF's documented hook). DRF
# imports this module for DEFAULT_PARSER_CLASSES when rest_framework.views is first imported, before any
# serializer builds its fields.
serializers.ModelSerializer.serializer_field_mapping[models.JSONField] = DepthBoundedJSONField
