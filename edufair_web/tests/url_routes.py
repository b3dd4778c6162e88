"""Every URL pattern of the URL conf, as the resolver spells it, for the tests that need a row per route
(the permission matrix, the blind-labelling check): a new route fails them until it gets a decision."""

import re

from django.urls import URLPattern, URLResolver, get_resolver

FORMAT_SUFFIX = re.compile(r"\\\.\(\?P<format>\[a-z0-9\]\+\)/\?\$$")


def url_patterns(patterns=None, prefix: str = ""):
    for entry in get_resolver().url_patterns if patterns is None else patterns:
        if isinstance(entry, URLResolver):
            yield from url_patterns(entry.url_patterns, prefix + str(entry.pattern))
        elif isinstance(entry, URLPattern):
            yield prefix + str(entry.pattern)


def base_pattern(pattern: str) -> str:
    """DRF's `.json`-suffixed twin of a route has the same permissions as the route itself."""
    return FORMAT_SUFFIX.sub("/$", pattern) if FORMAT_SUFFIX.search(pattern) else pattern
