"""Every page that computes what an expensive API read computes counts in the same per-user throttle: 429 with
Retry-After and a page that says when to come back."""

import ast
import inspect
import textwrap
import types

import pytest
from django.urls import URLPattern, URLResolver, get_resolver, reverse
from rest_framework.views import APIView

from edufair_web.accounts.throttles import EXPENSIVE_PAGES, EXPENSIVE_READ_TWINS

# Where the computations live; edufair_web holds the shared plumbing (parameters, permissions, converters).
DOMAIN = ("audits.", "annotation.")
WRITES = {"post", "put", "patch", "delete"}


def routes(patterns, namespace: str = ""):
    for entry in patterns:
        if isinstance(entry, URLResolver):
            inner = f"{namespace}{entry.namespace}:" if entry.namespace else namespace
            yield from routes(entry.url_patterns, inner)
        elif isinstance(entry, URLPattern) and entry.name:
            yield namespace + entry.name, entry


def domain_function(obj) -> bool:
    return isinstance(obj, types.FunctionType) and obj.__module__.startswith(DOMAIN)


def named_functions(func) -> set:
    """The domain functions `func`'s body names, bare or as module.attribute (its decorators left out)."""
    try:
        body = ast.parse(textwrap.dedent(inspect.getsource(func))).body[0].body
    except (OSError, TypeError):
        return set()
    found = set()
    for node in (inner for statement in body for inner in ast.walk(statement)):
        obj = None
        if isinstance(node, ast.Name):
            obj = func.__globals__.get(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            base = func.__globals__.get(node.value.id)
            obj = getattr(base, node.attr, None) if isinstance(base, types.ModuleType) else None
        if domain_function(obj):
            found.add(obj)
    return found


def reachable(functions: set, depth: int) -> set:
    seen, frontier = set(functions), set(functions)
    for _ in range(depth):
        frontier = {called for f in frontier for called in named_functions(f)} - seen
        seen |= frontier
    return seen


def read_methods(view, *, get_only: bool) -> set:
    """The view's own methods (its project classes'), that serve a read."""
    return {
        value
        for klass in view.__mro__
        if klass.__module__.startswith((*DOMAIN, "edufair_web."))
        for name, value in vars(klass).items()
        if isinstance(value, types.FunctionType) and (name == "get" if get_only else name not in WRITES)
    }


def derived_twins() -> dict[str, set[str]]:
    """Each expensive API read's page twins: pages whose reads reach (two calls deep) a domain function its GET calls
    outside its own module — the computation (analysis, report, export) both doors ask for."""
    found = dict(routes(get_resolver().url_patterns))
    pages = {
        name: pattern.callback.view_class
        for name, pattern in found.items()
        if getattr(pattern.callback, "view_class", None) and not issubclass(pattern.callback.view_class, APIView)
    }
    twins = {}
    for api in EXPENSIVE_READ_TWINS:
        view = found[api].callback.cls
        computes = {f for f in named_functions_of(read_methods(view, get_only=True)) if f.__module__ != view.__module__}
        twins[api] = {
            name for name, page in pages.items() if computes & reachable(read_methods(page, get_only=False), 2)
        }
    return twins


def named_functions_of(methods: set) -> set:
    return {called for method in methods for called in named_functions(method)}


def test_every_page_twin_of_an_expensive_read_is_throttled():
    twins = derived_twins()
    # The derivation finds the twins the finding named (HTML report, judge validation, Appendix-D report, the
    # judge-corrected table), so it is not vacuous.
    assert {"audits:results-export", "audits:results-judge-corrected"} <= twins["audit-judge-corrected"] | twins[
        "audit-export"
    ]
    assert {"annotation:report", "annotation:report-download"} <= twins["annotation-report"]
    assert "annotation:judge-validation" in twins["annotation-jv-report"]
    missing = {api: pages - EXPENSIVE_PAGES for api, pages in twins.items() if pages - EXPENSIVE_PAGES}
    assert missing == {}, f"pages computing what a throttled API read computes, not in EXPENSIVE_READ_TWINS: {missing}"
    routes_named = dict(routes(get_resolver().url_patterns))
    assert EXPENSIVE_PAGES <= set(routes_named), f"twins no route is named: {EXPENSIVE_PAGES - set(routes_named)}"


def page_url(name: str) -> str:
    """The page's address with made-up parameters: the throttle answers before the view looks anything up."""
    pattern = dict(routes(get_resolver().url_patterns))[name]
    kwargs = {key: "html" if key == "fmt" else "987654" for key in pattern.pattern.converters}
    return reverse(name, kwargs=kwargs)


@pytest.mark.django_db
def test_the_pages_spend_their_api_twins_budget(researcher_client, settings):
    settings.THROTTLE_RATES = {**settings.THROTTLE_RATES, "expensive_read": "2/minute"}
    assert researcher_client.get("/api/audits/987654/results/judge-corrected/").status_code == 404
    assert researcher_client.get(page_url("audits:results-judge-corrected")).status_code == 404
    # The budget is spent: the API and every page answer 429.
    assert researcher_client.get("/api/audits/987654/results/judge-corrected/").status_code == 429
    answers = {name: researcher_client.get(page_url(name)) for name in sorted(EXPENSIVE_PAGES)}
    assert {name: r.status_code for name, r in answers.items()} == dict.fromkeys(sorted(EXPENSIVE_PAGES), 429)
    refused = answers["annotation:report"]
    assert 0 < int(refused["Retry-After"]) <= 60
    assert "Too many requests" in refused.content.decode() and "Try again in" in refused.content.decode()
    # Cheap pages are not counted; writes are not expensive reads.
    assert researcher_client.get(reverse("audits:audits")).status_code == 200


@pytest.mark.django_db
def test_a_signed_out_request_goes_to_the_log_in_page_uncounted(client, settings):
    settings.THROTTLE_RATES = {**settings.THROTTLE_RATES, "expensive_read": "1/minute"}
    assert [client.get(page_url("annotation:report")).status_code for _ in range(3)] == [302, 302, 302]
