"""Middleware that answers 400 to paths and query parameters holding text no database can store.

Such text is a NUL (edufair_web.storable_text); it is refused here, once for every view, because such a value reaches
filters (`?kind=`, `?status=`) and lookups (`/api/workers/<hostname>/`) that no field validates, and PostgreSQL refused
it with a DataError (a 500)."""

from collections.abc import Iterator

from django.http import HttpRequest, HttpResponseBadRequest, JsonResponse

from edufair_web.storable_text import unstorable


def _request_texts(request: HttpRequest) -> Iterator[str]:
    yield request.path
    for key, values in request.GET.lists():
        yield key
        yield from values


class RefuseUnstorableTextMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest):
        problem = next(filter(None, map(unstorable, _request_texts(request))), None)
        if problem is None:
            return self.get_response(request)
        message = f"The request's path or query parameters contain {problem}."
        if request.path.startswith("/api/"):
            return JsonResponse({"detail": message}, status=400)
        return HttpResponseBadRequest(message, content_type="text/plain; charset=utf-8")
