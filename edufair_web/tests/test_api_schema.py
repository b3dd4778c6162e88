"""The OpenAPI 3 schema validates, documents a response body for every operation (a 2xx response with a
schema; a 204 "no content" answer counts as documented) so a REST client can rely on the schema alone, and
Swagger UI is served entirely from the app (no internet)."""

import re

import pytest
import yaml
from drf_spectacular.generators import SchemaGenerator
from openapi_spec_validator import validate

pytestmark = pytest.mark.django_db

METHODS = ("get", "post", "put", "patch", "delete")


def test_schema_is_valid_openapi_3(researcher_client):
    response = researcher_client.get("/api/schema/")
    assert response.status_code == 200
    schema = yaml.safe_load(response.content)
    assert schema["openapi"].startswith("3.")
    validate(schema)  # raises on any violation of the OpenAPI 3 specification
    assert "/api/me/" in schema["paths"]
    assert "/api/workers/" in schema["paths"]


def test_swagger_ui_assets_are_served_by_the_app_itself(researcher_client, live_server):
    import urllib.request

    html = researcher_client.get("/api/docs/").content.decode()
    assets = re.findall(r"""(?:src|href)=["']([^"']+\.(?:js|css|png))["']""", html)
    assert len(assets) >= 3, html
    for asset in assets:
        assert not asset.startswith(("http://", "https://", "//")), f"external asset {asset}"
        with urllib.request.urlopen(live_server.url + asset, timeout=10) as reply:
            assert reply.status == 200
            assert len(reply.read()) > 100


def test_schema_generates_without_warnings(tmp_path):
    """Warnings mean ambiguous names or untyped parameters in the schema clients are generated from."""
    from django.core.management import call_command

    call_command("spectacular", "--fail-on-warn", "--validate", "--file", str(tmp_path / "schema.yml"))


def _operations(schema: dict):
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            if method in METHODS:
                yield method.upper(), path, operation


def _documented(operation: dict) -> bool:
    for code, response in operation.get("responses", {}).items():
        if not str(code).startswith("2"):
            continue
        if str(code) == "204" or any(media.get("schema") for media in response.get("content", {}).values()):
            return True
    return False


def test_every_operation_documents_a_2xx_response_body():
    schema = SchemaGenerator().get_schema(request=None, public=True)
    operations = list(_operations(schema))
    assert len(operations) > 100  # the whole API, not an empty schema
    missing = [f"{method} {path}" for method, path, operation in operations if not _documented(operation)]
    assert missing == [], "operations without a documented 2xx response body"


def test_the_check_catches_an_undocumented_operation():
    assert not _documented({"responses": {"200": {"description": "No response body"}}})
    assert not _documented({"responses": {"400": {"content": {"application/json": {"schema": {}}}}}})
    assert _documented({"responses": {"204": {"description": "No item left"}}})
    assert _documented({"responses": {"201": {"content": {"application/json": {"schema": {"type": "object"}}}}}})
