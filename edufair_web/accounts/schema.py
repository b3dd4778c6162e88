"""The OpenAPI schema view (researchers only, cached per process) and the token scheme it documents.

The view is drf-spectacular's, built once per process and format.

Building the schema walks every view and serializer (about a second for ~180 KB); it only changes when the code
does, and new code means new processes, so the `schema` cache is local memory and never expires. The permission
check comes first (DRF runs it before the handler), so a cached schema is only served to whom may read it.
"""

import hashlib

from django.conf import settings
from django.core.cache import caches
from django.http import HttpResponse
from drf_spectacular.contrib.knox_auth_token import KnoxTokenScheme
from drf_spectacular.utils import extend_schema
from drf_spectacular.views import SCHEMA_KWARGS, SpectacularAPIView
from rest_framework.exceptions import ValidationError
from rest_framework.settings import api_settings


class RoleTokenScheme(KnoxTokenScheme):
    """The project's token authentication is knox's with roles read in the same query: the same scheme."""

    target_class = "edufair_web.accounts.authentication.RoleTokenAuthentication"


class CachedSchemaView(SpectacularAPIView):
    @extend_schema(**SCHEMA_KWARGS)  # as the parent's: the schema leaves itself out (SERVE_INCLUDE_SCHEMA)
    def get(self, request, *args, **kwargs):
        renderer = request.accepted_renderer
        lang = request.GET.get("lang") if settings.USE_I18N else None
        if lang and lang not in dict(settings.LANGUAGES):
            raise ValidationError({"lang": f"Unknown language {lang[:20]!r}; use one of settings.LANGUAGES."})
        version = self.api_version or request.version or self._get_version_parameter(request)
        # Only known values reach the key (hashed to a fixed size); the cache holds a few entries at most.
        key = hashlib.sha256(repr((renderer.media_type, lang, version)).encode()).hexdigest()
        cache = caches["schema"]
        cached = cache.get(key)
        if cached is None:
            response = super().get(request, *args, **kwargs)
            body = renderer.render(response.data, renderer.media_type, self.get_renderer_context())
            content_type = renderer.media_type + (f"; charset={renderer.charset}" if renderer.charset else "")
            cached = (body, content_type, response["Content-Disposition"])
            cache.set(key, cached, timeout=None)
        body, content_type, disposition = cached
        return HttpResponse(body, content_type=content_type, headers={"Content-Disposition": disposition})

    def _get_version_parameter(self, request):
        """`?version=` only names one of DRF's ALLOWED_VERSIONS (none here): drf-spectacular would otherwise
        write any value into the schema's `info.version`, and build and cache a schema per value."""
        version = request.GET.get("version")
        return version if version in (api_settings.ALLOWED_VERSIONS or ()) else None
