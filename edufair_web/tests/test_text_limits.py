"""Every text a person writes into EduFair is bounded (edufair_web.text_limits): every string of every JSON request
body in the API schema has a maxLength, every text field of every form has a max_length, and a longer value is
refused with the limit named — on the API and on the pages — and nothing is written."""

import importlib
import pkgutil

import pytest
from django import forms
from drf_spectacular.generators import SchemaGenerator
from rest_framework.test import APIClient

from annotation.models import AnnotationProject
from audits.models import PromptTemplate
from edufair_web.text_limits import DOCUMENT_MAX, NOTE_MAX

APPS = ("annotation", "audits", "edufair_web")
# Strings whose format bounds them already (a decimal, a date, an address) or that are a fixed set (enum).
BOUNDED_FORMATS = {"decimal", "date", "date-time", "uri", "email", "uuid", "binary"}


@pytest.fixture(scope="module")
def schema():
    return SchemaGenerator().get_schema(request=None, public=True)


def unbounded_strings(schema: dict) -> list[str]:
    components = schema["components"]["schemas"]
    found: list[str] = []
    seen: set[str] = set()

    def walk(node: dict, where: str) -> None:
        if "$ref" in node:
            name = node["$ref"].rsplit("/", 1)[-1]
            if name in seen:
                return
            seen.add(name)
            node, where = components[name], name
        for key in ("allOf", "oneOf", "anyOf"):
            for part in node.get(key, []):
                walk(part, where)
        if node.get("type") == "array":
            walk(node.get("items", {}), f"{where}[]")
        elif node.get("type") == "string":
            if "enum" not in node and node.get("format") not in BOUNDED_FORMATS and "maxLength" not in node:
                found.append(where)
        for key, value in node.get("properties", {}).items():
            if not value.get("readOnly"):
                walk(value, f"{where}.{key}")
        if isinstance(node.get("additionalProperties"), dict):
            walk(node["additionalProperties"], f"{where}.*")

    for operations in schema["paths"].values():
        for operation in operations.values():
            for content_type, content in operation.get("requestBody", {}).get("content", {}).items():
                if content_type == "application/json":
                    walk(content["schema"], operation["operationId"])
    return found


def test_every_string_of_every_json_request_body_has_a_max_length(schema):
    assert unbounded_strings(schema) == []


def test_the_schema_check_finds_an_unbounded_string():
    schema = {
        "components": {"schemas": {"Note": {"type": "object", "properties": {"body": {"type": "string"}}}}},
        "paths": {
            "/x/": {
                "post": {
                    "operationId": "x_create",
                    "requestBody": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Note"}}}},
                }
            }
        },
    }
    assert unbounded_strings(schema) == ["Note.body"]


def project_forms() -> list[type[forms.BaseForm]]:
    for app in APPS:
        package = importlib.import_module(app)
        for module in pkgutil.walk_packages(package.__path__, f"{app}."):
            if not any(part in module.name for part in (".tests", ".migrations", ".management")):
                importlib.import_module(module.name)

    def subclasses(cls):
        for sub in cls.__subclasses__():
            yield sub
            yield from subclasses(sub)

    return sorted({f for f in subclasses(forms.BaseForm) if f.__module__.startswith(APPS)}, key=str)


def test_every_text_field_of_every_form_has_a_max_length():
    found = project_forms()
    assert len(found) >= 15  # the walk reached the forms (the apps have more than that)
    unbounded = [
        f"{form.__module__}.{form.__name__}.{name}"
        for form in found
        for name, field in form.base_fields.items()
        # A JSON field's max_length would count the keys of the parsed value, not its characters: JSON inputs are
        # bounded by the request size and edufair_web.json_input's depth.
        if isinstance(field, forms.CharField) and not isinstance(field, forms.JSONField) and field.max_length is None
    ]
    assert unbounded == []


@pytest.mark.django_db
def test_an_over_long_text_is_refused_on_the_api_naming_the_limit(researcher):
    api = APIClient()
    api.force_authenticate(researcher)
    project = AnnotationProject.objects.create(name="bounded text")
    response = api.patch(
        f"/api/annotation/projects/{project.pk}/", {"description": "x" * (NOTE_MAX + 1)}, format="json"
    )
    assert response.status_code == 400
    assert f"no more than {NOTE_MAX} characters" in response.json()["description"][0]
    project.refresh_from_db()
    assert project.description == ""
    at_limit = api.patch(f"/api/annotation/projects/{project.pk}/", {"description": "x" * NOTE_MAX}, format="json")
    assert at_limit.status_code == 200

    template = PromptTemplate.objects.create(kind="judge_rubric", name="bounded", text="Rate ${tutor_turn}")
    versions = PromptTemplate.objects.count()
    response = api.post(
        f"/api/prompt-templates/{template.pk}/revise/", {"text": "y" * (DOCUMENT_MAX + 1)}, format="json"
    )
    assert response.status_code == 400 and f"no more than {DOCUMENT_MAX} characters" in response.json()["text"][0]
    assert PromptTemplate.objects.count() == versions


@pytest.mark.django_db
def test_an_over_long_text_is_refused_on_a_page_naming_the_limit(researcher_client):
    response = researcher_client.post(
        "/annotation/projects/new/", {"name": "too long", "description": "x" * (NOTE_MAX + 1), "preset": ""}
    )
    assert response.status_code == 400
    assert f"at most {NOTE_MAX} characters" in response.content.decode()
    assert not AnnotationProject.objects.filter(name="too long").exists()


@pytest.mark.django_db
def test_a_log_in_with_a_megabyte_password_is_refused_as_too_long_not_checked(researcher):
    response = APIClient().post(
        "/api/auth/token/", {"username": researcher.username, "password": "p" * 1_000_000}, format="json"
    )
    assert response.status_code == 400 and "no more than 4096 characters" in response.json()["password"][0]
