"""The OpenAPI 3 schema validates, and Swagger UI is served entirely from the app (no internet)."""

import re

import pytest
import yaml
from openapi_spec_validator import validate

pytestmark = pytest.mark.django_db


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
