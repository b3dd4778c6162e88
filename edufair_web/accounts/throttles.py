"""Request throttles for log-ins, writes and expensive reads, with rates read from settings.

The throttles are DRF's, counted in the `default` cache: password log-ins per client address, and writes and expensive
reads per user. Rates are read from `settings.THROTTLE_RATES` on every request, so an operator sets them from the
environment and a test can change them; a rate of None switches that throttle off.

The default cache is shared by every web process (Redis, or a table in the database: settings.CACHES), so the rates
hold for the deployment, not per process. An expensive read's pages count in the same per-user budget as its API
(`edufair_web.accounts.expensive_read_pages`).
"""

from django.conf import settings
from rest_framework.permissions import SAFE_METHODS
from rest_framework.throttling import SimpleRateThrottle

from .client_address import client_address

# Reads that compute or serialise a whole audit or project (analysis results, exports, reports, model fits) or the
# schema, by the API route's name, each with its page twins (namespaced route names): pages that compute the same for
# a browser. Both count in one per-user budget.
EXPENSIVE_READ_TWINS: dict[str, tuple[str, ...]] = {
    "schema": (),
    "audit-results": ("audits:results", "audits:results-cell", "audits:results-pairs", "audits:results-compare"),
    "audit-export": ("audits:results-export", "audits:results-report"),
    "audit-judge-corrected": ("audits:results-judge-corrected", "audits:results-judge-corrected-export"),
    "annotation-report": ("annotation:report", "annotation:report-download"),
    "annotation-main-aggregation": (),
    "annotation-labels-export": ("annotation:labels-export",),
    "annotation-jv-report": ("annotation:judge-validation",),
}
EXPENSIVE_READS = frozenset(EXPENSIVE_READ_TWINS)
EXPENSIVE_PAGES = frozenset(page for pages in EXPENSIVE_READ_TWINS.values() for page in pages)
_EXPENSIVE_ROUTES = EXPENSIVE_READS | EXPENSIVE_PAGES


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
    """Reads named in EXPENSIVE_READS and their pages, per user."""

    scope = "expensive_read"

    def get_cache_key(self, request, view) -> str | None:
        match = getattr(request, "resolver_match", None)
        if request.method not in SAFE_METHODS or match is None or match.view_name not in _EXPENSIVE_ROUTES:
            return None
        return self._user_key(request)
