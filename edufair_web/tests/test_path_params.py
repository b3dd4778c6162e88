"""Ids in paths and query parameters: a huge, negative or non-numeric id is a 404 (path) or a 400 naming the
parameter (query), never a database overflow. One rule (edufair_web.converters), checked on every route."""

import pytest
from rest_framework.test import APIClient

from edufair_web.accounts.roles import ANNOTATOR, RESEARCHER
from edufair_web.converters import IdConverter, parse_id
from edufair_web.tests.url_routes import url_patterns

HUGE = "99999999999999999999"


def test_every_integer_route_uses_the_bounded_id_converter():
    # Django's <int:…> takes any number of digits, which the database cannot hold: a 500 on lookup.
    unbounded = [pattern for pattern in url_patterns() if "<int:" in pattern]
    assert not unbounded, f"use <id:…> instead of <int:…>: {unbounded}"
    assert any("<id:" in pattern for pattern in url_patterns())


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("0", 0),
        ("42", 42),
        ("9" * 18, 10**18 - 1),
        ("9" * 19, None),
        (HUGE, None),
        ("-1", None),
        ("1e9999", None),
        ("1.5", None),
        ("abc", None),
        ("", None),
        ("²", None),  # str.isdigit() says yes; int() says no
        ("١٢", None),  # Arabic-Indic digits: int() would take them
    ],
)
def test_parse_id(text, expected):
    assert parse_id(text) == expected


def test_the_converter_regex_refuses_what_parse_id_refuses():
    import re

    pattern = re.compile(IdConverter.regex)
    for text in ("0", "7", "9" * 18, "9" * 19, "-1", "1e9", "x"):
        assert (pattern.fullmatch(text) is not None) == (parse_id(text) is not None), text


@pytest.fixture
def api(make_user):
    def client(role):
        api_client = APIClient(raise_request_exception=False)
        api_client.force_authenticate(make_user(role))
        return api_client

    return client


@pytest.mark.django_db
@pytest.mark.parametrize("role", [RESEARCHER, ANNOTATOR])
@pytest.mark.parametrize(
    "url",
    [
        f"/api/annotation/training/{HUGE}/",
        f"/api/annotation/main/{HUGE}/next/",
        f"/api/annotation/main/{HUGE}/items/{HUGE}/discussion/",
        "/api/annotation/training/-1/",
        "/api/annotation/training/abc/",
        f"/api/audits/{HUGE}/results/",
        f"/annotation/training/{HUGE}/",
        f"/annotation/label/{HUGE}/",
        f"/audits/runs/{HUGE}/",
    ],
)
def test_huge_negative_or_non_numeric_path_ids_are_404(api, role, url):
    response = api(role).get(url)
    assert response.status_code == 404, (url, response.status_code)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("role", "url", "parameter"),
    [
        (RESEARCHER, "/api/annotation/enrollments/?stage=1e9999", "stage"),
        (ANNOTATOR, "/api/annotation/enrollments/?stage=1e9999", "stage"),
        (RESEARCHER, f"/api/annotation/enrollments/?stage={HUGE}", "stage"),
        (RESEARCHER, f"/api/annotation/items/?project={HUGE}", "project"),
        (RESEARCHER, "/api/annotation/stages/?project=-3", "project"),
        (RESEARCHER, f"/api/dialogues/?audit={HUGE}", "audit"),
        (RESEARCHER, "/api/dialogues/?audit=x", "audit"),
        (RESEARCHER, f"/api/questions/?import={HUGE}", "import"),
    ],
)
def test_bad_id_query_parameters_are_400_naming_the_parameter(api, role, url, parameter):
    response = api(role).get(url)
    assert response.status_code == 400, (url, response.status_code)
    assert parameter in response.json()


@pytest.mark.django_db
def test_a_good_id_query_parameter_still_filters(api):
    response = api(RESEARCHER).get("/api/annotation/enrollments/?stage=12345")
    assert response.status_code == 200
    assert response.json()["results"] == []


@pytest.mark.django_db
@pytest.mark.parametrize(
    "url",
    [
        "/api/prompt-templates/?kind=%00",
        "/api/dialogues/?status=a%00b",
        "/api/workers/a%00b/",
        "/api/annotation/items/?%00=1",
        "/audits/questionbank/?q=%00",
    ],
)
def test_a_nul_in_the_path_or_a_query_parameter_is_a_400(api, url):
    # PostgreSQL refused these with a DataError (a 500) in whichever view filtered on them.
    response = api(RESEARCHER).get(url)
    assert response.status_code == 400
    assert "a NUL character" in response.content.decode()


PAGE_HOSTILE = [HUGE, "1e9999", "abc", "-1", "²", "9" * 5000]


@pytest.fixture
def researcher_page(client, make_user):
    page_client = type(client)(raise_request_exception=False)
    page_client.force_login(make_user(RESEARCHER))
    return page_client


@pytest.mark.django_db
@pytest.mark.parametrize("value", PAGE_HOSTILE)
@pytest.mark.parametrize(
    ("method", "url", "field"),
    [
        ("get", "/audits/design/levels/new/", "dimension"),  # "²".isdigit() is true; int("²") was a 500
        ("post", "/audits/runs/new/", "student_endpoint"),  # the same test on the launch form's endpoints
        ("post", "/audits/runs/new/", "tutors"),  # a ModelMultipleChoiceField's pk__in: an OverflowError on SQLite
        ("post", "/audits/runs/new/preview/", "tutors"),
        ("post", "/annotation/judge-validation/new/", "audit"),  # Audit.objects.filter(pk="abc") was a 500
        ("get", "/audits/results/compare/", "left"),
        ("get", "/annotation/adjudicate/", "stage"),
        ("get", "/audits/questionbank/", "import"),
    ],
)
def test_bad_ids_in_page_parameters_are_never_a_server_error(researcher_page, method, url, field, value):
    data = {field: f"{value}:{value}" if field == "left" else value}
    response = getattr(researcher_page, method)(url, data)
    assert response.status_code < 500, (method, url, field, value, response.status_code)


@pytest.mark.django_db
@pytest.mark.parametrize("value", PAGE_HOSTILE)
def test_bad_ids_in_posted_forms_are_never_a_server_error(researcher_page, make_user, value):
    """Ids named by a posted field (a conflict to decide, an item to label): get_object_or_404(pk="abc") was a 500."""
    from annotation.tests.main_setup import build_main_stage, pass_gate

    main = build_main_stage(items=1, overlap=1, name="posted ids")
    conflicts = researcher_page.post(f"/annotation/projects/{main.project.pk}/conflicts/", {"conflict": value})
    assert conflicts.status_code == 404
    annotator = type(researcher_page)(raise_request_exception=False)
    labeller = make_user(ANNOTATOR)
    pass_gate(main.stage, labeller)
    annotator.force_login(labeller)
    labelled = annotator.post(f"/annotation/label/{main.stage.pk}/", {"item": value})
    assert labelled.status_code < 500 and "not part of this project" in labelled.content.decode()


@pytest.mark.django_db
@pytest.mark.parametrize("value", ["abc", "1e9999", "²", "9" * 5000])
def test_a_guideline_version_that_is_not_a_number_is_refused_not_a_server_error(make_user, value):
    from django.test import Client

    from annotation.models import GuidelineConfirmation
    from annotation.tests.training_setup import build_stage, enrol

    s = build_stage(pilot=1, qualification=1, examples=0, main=1)
    user = make_user(ANNOTATOR)
    enrol(s, user)
    page = Client(raise_request_exception=False)
    page.force_login(user)
    response = page.post(f"/annotation/training/{s.stage.pk}/guideline/", {"version": value}, follow=True)
    assert response.status_code < 500 and "not a version of the guideline" in response.content.decode()
    assert not GuidelineConfirmation.objects.exists()
