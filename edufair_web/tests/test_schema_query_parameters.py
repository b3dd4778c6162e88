"""Every query parameter an API operation reads is declared on that operation in the OpenAPI schema, so a client
generated from the schema (or a person reading it) knows every filter (`?stage=`, `?status=`, `?kind=`, …).

The reads are found in the views' source (edufair_web.tests.query_reads), the declarations in the schema generated
once for the module, in this process. A filter a viewset's `get_queryset` reads is its list's filter; DRF's own
parameters (pages, `?format=`) are in the schema already.
"""

import copy

import pytest
from drf_spectacular import views as spectacular_views
from drf_spectacular.generators import SchemaGenerator
from rest_framework import serializers, viewsets
from rest_framework.decorators import api_view
from rest_framework.views import APIView

from edufair_web.converters import query_id
from edufair_web.tests.query_reads import QueryReadAnalysis

SPECTACULAR_VIEWS = tuple(
    cls for cls in vars(spectacular_views).values() if isinstance(cls, type) and issubclass(cls, APIView)
)


@pytest.fixture(scope="module")
def api():
    """The schema, and every API operation as (method, schema path, view class, viewset action)."""
    generator = SchemaGenerator()
    schema = generator.get_schema(request=None, public=True)
    operations = []
    for path, _, method, callback in generator.endpoints:
        path = generator.coerce_path(path, method, generator.create_view(callback, method))
        action = callback.actions[method.lower()] if getattr(callback, "actions", None) else None
        operations.append((method, path, callback.cls, action))
    return schema, operations


def _declared(schema: dict, method: str, path: str) -> set[str] | None:
    operation = schema["paths"].get(path, {}).get(method.lower())
    if operation is None:
        return None
    return {p["name"] for p in operation.get("parameters", []) if p["in"] == "query"}


def _undeclared(schema: dict, reads: dict) -> list[str]:
    """`METHOD path: name` for each parameter an operation reads that its schema does not declare."""
    missing = []
    for (method, path), names in sorted(reads.items()):
        declared = _declared(schema, method, path)
        missing += [f"{method} {path}: ?{name}=" for name in sorted(names - (declared or set()))]
    return missing


@pytest.fixture(scope="module")
def reads(api):
    """{(method, path): names read} for the operations in the schema; the unresolved reads of all of them."""
    schema, operations = api
    analysis = QueryReadAnalysis()
    found, unresolved, outside = {}, [], []
    for method, path, view_cls, action in operations:
        result = analysis.operation_reads(view_cls, method, action)
        unresolved += [u for u in result.unresolved if u not in unresolved]
        if _declared(schema, method, path) is not None:
            found[method, path] = result.names
        elif not issubclass(view_cls, SPECTACULAR_VIEWS):
            outside.append(f"{method} {path}")
    return found, unresolved, outside


def test_every_query_parameter_an_operation_reads_is_in_its_schema(api, reads):
    schema, _ = api
    found, unresolved, outside = reads
    assert outside == [], "API operations the schema leaves out (only the schema and its docs may be)"
    assert unresolved == [], "query reads whose parameter name the analysis cannot tell: write them plainly"
    assert _undeclared(schema, found) == [], "declare these with extend_schema(parameters=[OpenApiParameter(…)])"


def test_the_analysis_finds_the_filters_the_api_has(reads):
    """A guard against an analysis that finds nothing and so passes: the reads of a few endpoints, as the code has
    them (a list's get_queryset, a helper taking the name, a serializer given the whole query)."""
    found, _, _ = reads
    assert found["GET", "/api/dialogues/"] == {"audit", "status"}
    assert found["GET", "/api/dialogues/{id}/"] == set()
    assert found["GET", "/api/annotation/enrollments/"] == {"stage"}
    assert found["GET", "/api/annotation/adjudication/threads/"] == {"open", "project", "stage"}
    assert found["POST", "/api/annotation/judge-validation/mrbench/"] == {"filename", "name"}
    assert {"format", "table", "alpha", "rule"} <= found["GET", "/api/audits/{id}/export/"]
    assert sum(1 for names in found.values() if names) >= 20


def test_a_declaration_taken_out_of_the_schema_is_reported(api, reads):
    schema, _ = api
    found, _, _ = reads
    trimmed = copy.deepcopy(schema)
    operation = trimmed["paths"]["/api/annotation/enrollments/"]["get"]
    operation["parameters"] = [p for p in operation["parameters"] if p["name"] != "stage"]
    assert _undeclared(trimmed, found) == ["GET /api/annotation/enrollments/: ?stage="]
    # Declared in another place than the query (a header) is not declared.
    operation["parameters"].append({"in": "header", "name": "stage", "schema": {"type": "integer"}})
    assert _undeclared(trimmed, found) == ["GET /api/annotation/enrollments/: ?stage="]


# --- the analysis on small views of its own: each way of reading a parameter ---------------------------------------

NAMES = ("looped", "looped_too")


class _QuerySerializer(serializers.Serializer):
    from_serializer = serializers.IntegerField(required=False)
    from_serializer_too = serializers.CharField(required=False)


def _read_by_name(params, name):
    return params.get(name)


class _EveryWayOfReading(APIView):
    query_filters = {"from_class_attribute": "x_id"}

    def get(self, request):
        params = request.query_params
        params.get("aliased")
        request.GET["subscripted"]
        self.request.query_params.getlist("many")
        if "tested" in params:
            pass
        for name in NAMES:
            params.get(name)
        for param, _lookup in self.query_filters.items():
            query_id(params, param)
        _read_by_name(request.query_params, "by_helper")
        _QuerySerializer(data={k: v for k, v in params.items()})
        return self._more(request)

    def _more(self, request):
        return request.query_params.get("in_a_method")


def test_the_analysis_finds_each_way_of_reading():
    reads = QueryReadAnalysis().operation_reads(_EveryWayOfReading, "GET", None)
    assert reads.unresolved == []
    assert reads.names == {
        "aliased",
        "subscripted",
        "many",
        "tested",
        "looped",
        "looped_too",
        "from_class_attribute",
        "by_helper",
        "in_a_method",
        "from_serializer",
        "from_serializer_too",
    }


class _Unreadable(APIView):
    def get(self, request):
        key = request.headers.get("X-Name")
        request.query_params.get(key)
        for _name in request.query_params:
            pass
        return dict(request.query_params)


def test_a_read_the_analysis_cannot_name_is_reported_not_skipped():
    reads = QueryReadAnalysis().operation_reads(_Unreadable, "GET", None)
    assert reads.names == set()
    assert len(reads.unresolved) == 3, reads.unresolved
    assert all("test_schema_query_parameters.py:" in u for u in reads.unresolved)


class _Filtered(viewsets.ReadOnlyModelViewSet):
    def get_queryset(self):
        return self.request.query_params.get("listed")


def test_a_get_queryset_filter_belongs_to_the_list():
    analysis = QueryReadAnalysis()
    assert analysis.operation_reads(_Filtered, "GET", "list").names == {"listed"}
    assert analysis.operation_reads(_Filtered, "GET", "retrieve").names == set()


class _BackendFilter:
    def filter_queryset(self, request, queryset, view):
        for name in view.query_filters:
            query_id(request.query_params, name)
        return queryset


class _FilteredByBackend(viewsets.ReadOnlyModelViewSet):
    filter_backends = [_BackendFilter]
    query_filters = ("by_backend",)


@api_view(["GET"])
def _function_view(request):
    return request.GET.get("in_a_function_view")


def test_a_filter_backend_and_a_function_view_are_read():
    analysis = QueryReadAnalysis()
    assert analysis.operation_reads(_FilteredByBackend, "GET", "list").names == {"by_backend"}
    assert analysis.operation_reads(_FilteredByBackend, "GET", "retrieve").names == set()
    assert analysis.operation_reads(_function_view.cls, "GET", None).names == {"in_a_function_view"}
