"""The client's address as the trusted reverse proxies saw it: one rule for lockouts (django-axes) and throttles.

`TRUSTED_PROXY_COUNT` proxies sit in front of the app; each appends the address it received the request from
to `X-Forwarded-For`, so the client is the entry the outermost trusted proxy wrote: the `TRUSTED_PROXY_COUNT`-th
from the right. Anything further left was sent by the client itself and is not trusted. With no proxy (0), the
header is ignored and the address is the socket's (`REMOTE_ADDR`).
"""

from django.conf import settings
from ipware.ip import get_client_ip


def client_address(request) -> str | None:
    """The client's IP address for ``request`` (a Django or DRF request); None when the request has none (one
    built in code, as `Client.force_login` does): django-axes stores it in an IP address column."""
    meta = request.META
    proxies = settings.TRUSTED_PROXY_COUNT
    if proxies > 0:
        # django-ipware counts the proxies listed in the header, i.e. all but the one that connects to the app;
        # not strict: a header the client started itself is longer than that, and its own entries are skipped.
        address, _ = get_client_ip(
            request,
            proxy_order="left-most",
            proxy_count=proxies - 1,
            request_header_order=("HTTP_X_FORWARDED_FOR", "REMOTE_ADDR"),
            strict=False,
        )
        if address:
            return address
    return meta.get("REMOTE_ADDR") or None
