"""Request throttles for log-ins, writes and expensive reads, with rates read from settings.

The throttles are DRF's, counted in the `default` cache: password log-ins per client address, and writes and expensive
reads per user. Rates are read from `settings.THROTTLE_RATES` on every request, so an operator sets them from the
environment and a test can change them; a rate of None switches that throttle off.

The counts live in the cache: with the default local-memory cache each web process counts on its own (N processes
allow N times the rate); `CACHE_URL` names a Redis database that all processes share.
"""

from django.conf import settings
from rest_framework.permissions import SAFE_METHODS
from rest_framework.throttling import SimpleRateThrottle

from .client_address import client_address

# Reads that compute or serialise a whole audit or project (analysis results, exports, reports, model fits) or the
# schema.
EXPENSIVE_READS = frozenset(
    {
        "schema",
        "audit-results",
        "audit-export",
        "annotation-report",
        "annotation-main-aggregation",
        "annotation-labels-export",
        "annotation-jv-report",
    }
)


class _ConfiguredRateThrottle(SimpleRateThrottle):
    def get_rate(self) -> str | None:
        return settings.THROTTLE_RATES.get(self.scope)

    def get_ident(self, request) -> str:
        return client_address(request) or "no-address"

    def _key(self, ident) -> str:
        return self.cache_format % {"scope": self.scope, "ident": ident}

    def _user_key(self, request) -> str:
        user = getattr(request, "user", None)
        return self._key(f"user-{user.pk}" if user is not None and user.is_authenticated else self.get_ident(request))


class LoginRateThrottle(_ConfiguredRateThrottle):
    """Password log-ins from one client address, on the log-in page and the token endpoint together: each costs
    a password hash, and guesses spread over many usernames escape django-axes' per-username lockout."""

    scope = "login"

    def get_cache_key(self, request, view) -> str:
        return self._key(self.get_ident(request))


class UserWriteRateThrottle(_ConfiguredRateThrottle):
    """Every API request that changes something, per user."""

    scope = "write"

    def get_cache_key(self, request, view) -> str | None:
        return None if request.method in SAFE_METHODS else self._user_key(request)


class ExpensiveReadRateThrottle(_ConfiguredRateThrottle):
    """Reads named in EXPENSIVE_READS, per user."""

    scope = "expensive_read"

    def get_cache_key(self, request, view) -> str | None:
        match = getattr(request, "resolver_match", None)
        if request.method not in SAFE_METHODS or match is None or match.url_name not in EXPENSIVE_READS:
            return None
        return self._user_key(request)
