"""The API's JSON request parser: DRF's, after refusing a body nested deeper than json_input.MAX_DEPTH (a 400).

The body's size is bounded before this runs: DRF hands JSON parsers `request.body`, which Django refuses
(400) over DATA_UPLOAD_MAX_MEMORY_SIZE.
"""

import io

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

from edufair_web.json_input import MAX_DEPTH, nesting_depth


class DepthBoundedJSONParser(JSONParser):
    """A deep body would otherwise raise RecursionError inside json.load, which DRF does not catch (a 500)."""

    def parse(self, stream, media_type=None, parser_context=None):
        body = stream.read() if stream is not None else b""
        if nesting_depth(body, MAX_DEPTH) > MAX_DEPTH:
            raise ParseError(f"JSON parse error - the JSON is nested too deeply (more than {MAX_DEPTH} levels)")
        return super().parse(io.BytesIO(body), media_type, parser_context)
