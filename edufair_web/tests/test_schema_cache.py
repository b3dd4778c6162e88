"""The API schema: for researchers only, built once per process and format and then served from the cache."""

import pytest
from django.core.cache import caches
from drf_spectacular.generators import SchemaGenerator

pytestmark = pytest.mark.django_db


@pytest.fixture
def schema_builds(monkeypatch):
    """Counts the schema builds from here on (the cache starts empty)."""
    caches["schema"].clear()
    builds = []
    build = SchemaGenerator.get_schema

    def counted(self, *args, **kwargs):
        builds.append(1)
        return build(self, *args, **kwargs)

    monkeypatch.setattr(SchemaGenerator, "get_schema", counted)
    yield builds
    caches["schema"].clear()


def test_the_schema_is_built_once_and_then_served_from_the_cache(researcher_client, schema_builds):
    first = researcher_client.get("/api/schema/")
    second = researcher_client.get("/api/schema/")
    assert first.status_code == second.status_code == 200
    assert first.content == second.content and b"/api/auth/token/" in first.content
    assert first["Content-Type"] == second["Content-Type"]
    assert first["Content-Type"].startswith("application/vnd.oai.openapi")
    assert first["Content-Disposition"] == second["Content-Disposition"]
    assert len(schema_builds) == 1


def test_each_format_is_cached_apart(researcher_client, schema_builds):
    yaml_schema = researcher_client.get("/api/schema/")
    json_schema = researcher_client.get("/api/schema/", {"format": "json"})
    assert json_schema["Content-Type"].startswith("application/vnd.oai.openapi+json")
    assert json_schema.json()["openapi"].startswith("3.")
    assert yaml_schema.content.startswith(b"openapi:")
    assert researcher_client.get("/api/schema/", {"format": "json"}).content == json_schema.content
    assert len(schema_builds) == 2


def test_query_strings_do_not_grow_the_cache(researcher_client, schema_builds):
    """Only known values reach the cache key: an unknown language is a 400, an unknown version is ignored."""
    for n in range(5):
        refused = researcher_client.get("/api/schema/", {"lang": f"x{n}"})
        assert refused.status_code == 400 and b"Unknown language" in refused.content
        answered = researcher_client.get("/api/schema/", {"version": f"v{n}", "format": "json"})
        assert answered.status_code == 200 and answered.json()["info"]["version"] == "1.0.0"
    assert researcher_client.get("/api/schema/", {"lang": "de"}).status_code == 200
    assert len(schema_builds) == 2  # JSON once, German YAML once


@pytest.mark.parametrize("role", ["annotator", "adjudicator", "operator"])
def test_only_researchers_read_the_schema_even_once_cached(client, researcher_client, make_user, role):
    assert researcher_client.get("/api/schema/").status_code == 200  # now in the cache
    client.logout()
    client.force_login(make_user(role))
    assert client.get("/api/schema/").status_code == 403
    assert client.get("/api/docs/").status_code == 403


def test_anonymous_users_get_401_from_the_schema(client):
    assert client.get("/api/schema/").status_code == 401
