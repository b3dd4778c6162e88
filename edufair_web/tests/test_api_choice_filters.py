"""A query parameter the schema declares with a fixed set of values (`?status=`, `?kind=`, `?source=`, `?as=`) takes
exactly the declared values, and answers any other with a 400 naming the parameter and the values it takes, not an
empty list that a misspelling (`?status=Done`, `?source=jsonl`, the name of an import format) would also give.

The values are read from the schema generated in this process (edufair_web.api_parameters declares them)."""

import json

import pytest
from drf_spectacular.generators import SchemaGenerator

from audits.services.design import design_defaults_seed

pytestmark = pytest.mark.django_db

# (operation path, parameter, a value outside the set that a client could plausibly send)
CHOICE_FILTERS = [
    ("/api/dialogues/", "status", "Done"),
    ("/api/prompt-templates/", "kind", "judge"),
    ("/api/questions/", "source", "jsonl"),
    ("/api/annotation/projects/{project_pk}/labels/", "as", "json"),
]


@pytest.fixture(scope="module")
def declared_values():
    schema = SchemaGenerator().get_schema(request=None, public=True)
    found = {}
    for path, name, _ in CHOICE_FILTERS:
        parameters = schema["paths"][path]["get"]["parameters"]
        found[path, name] = next(p["schema"]["enum"] for p in parameters if p["name"] == name and p["in"] == "query")
    return found


@pytest.fixture
def url_of(researcher_client):
    def url(path: str) -> str:
        if "{project_pk}" not in path:
            return path
        project = researcher_client.post(
            "/api/annotation/projects/",
            json.dumps({"name": "Export", "categories": ["A"], "subjects": ["maths"]}),
            content_type="application/json",
        ).json()
        return path.replace("{project_pk}", str(project["id"]))

    return url


@pytest.mark.parametrize(("path", "name", "outside"), CHOICE_FILTERS)
def test_a_value_outside_the_declared_set_is_a_400_naming_the_parameter_and_its_values(
    researcher_client, url_of, declared_values, path, name, outside
):
    response = researcher_client.get(url_of(path), {name: outside})
    assert response.status_code == 400, response.content
    body = response.json()
    assert list(body) == [name]  # as a malformed id is refused (edufair_web.converters.query_id)
    message = body[name]
    assert message.startswith("One of ") and message.endswith(".")
    assert sorted(message.removeprefix("One of ").removesuffix(".").split(", ")) == declared_values[path, name]


@pytest.mark.parametrize(("path", "name", "outside"), CHOICE_FILTERS)
def test_every_declared_value_is_taken(researcher_client, url_of, declared_values, path, name, outside):
    url = url_of(path)
    for value in declared_values[path, name]:
        response = researcher_client.get(url, {name: value})
        assert response.status_code == 200, (value, response.content)
    assert researcher_client.get(url, {name: ""}).status_code == 200  # empty: the filter is not applied


def test_a_declared_value_narrows_the_list(researcher_client):
    design_defaults_seed()
    every = researcher_client.get("/api/prompt-templates/").json()["results"]
    rubrics = researcher_client.get("/api/prompt-templates/", {"kind": "judge_rubric"}).json()["results"]
    assert rubrics and len(rubrics) < len(every)
    assert {row["kind"] for row in rubrics} == {"judge_rubric"}
    named = researcher_client.get("/api/prompt-templates/", {"kind": "judge_rubric", "name": "judge"}).json()
    assert [(row["kind"], row["name"]) for row in named["results"]] == [("judge_rubric", "judge")]
