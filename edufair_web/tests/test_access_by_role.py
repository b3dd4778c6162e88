"""Who may open what: anonymous users go to log in; annotators are kept out of researcher pages; user and token
administration is the operator's, the research data the researcher's."""

import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("url_name", ["home", "system"])
def test_anonymous_user_is_sent_to_login(client, url_name):
    response = client.get(reverse(url_name))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


def test_anonymous_user_gets_401_or_403_from_the_api(client):
    assert client.get("/api/me/").status_code in (401, 403)
    assert client.get("/api/workers/").status_code in (401, 403)


@pytest.mark.parametrize("url", ["/system/", "/admin/", "/admin/auth/user/", "/api/workers/"])
def test_annotator_gets_403_on_researcher_pages_admin_and_api(annotator_client, url):
    assert annotator_client.get(url).status_code == 403


@pytest.mark.parametrize("url", ["/system/", "/admin/", "/admin/auth/user/", "/api/workers/"])
def test_adjudicator_gets_403_on_researcher_pages(client, adjudicator, url):
    client.force_login(adjudicator)
    assert client.get(url).status_code == 403


@pytest.mark.parametrize(
    "url", ["/", "/system/", "/admin/", "/admin/audits/question/", "/api/workers/", "/api/me/", "/api/schema/"]
)
def test_researcher_opens_researcher_pages(researcher_client, url):
    assert researcher_client.get(url).status_code == 200


ACCOUNT_ADMIN = [
    "/admin/auth/user/",
    "/admin/auth/user/add/",
    "/admin/auth/group/",
    "/admin/knox/authtoken/",
    "/admin/axes/accessattempt/",
    "/admin/accounts/workerheartbeat/",
]


@pytest.mark.parametrize("url", ACCOUNT_ADMIN)
def test_researcher_gets_403_on_user_and_token_administration(researcher_client, url):
    assert researcher_client.get(url).status_code == 403


@pytest.fixture
def operator_client(client, make_user):
    client.force_login(make_user("operator"))
    return client


@pytest.mark.parametrize("url", ["/", "/system/", "/admin/", *ACCOUNT_ADMIN])
def test_operator_administers_users_and_tokens(operator_client, url):
    assert operator_client.get(url).status_code == 200


@pytest.mark.parametrize(
    "url", ["/admin/audits/question/", "/audits/questionbank/", "/api/audits/", "/api/questions/", "/api/schema/"]
)
def test_operator_sees_none_of_the_research(operator_client, url):
    assert operator_client.get(url).status_code == 403


def test_the_admin_index_lists_each_role_its_own_models(researcher_client, make_user):
    from django.test import Client

    researcher_page = researcher_client.get("/admin/").content.decode()
    operator = Client()
    operator.force_login(make_user("operator"))
    operator_page = operator.get("/admin/").content.decode()
    assert "/admin/audits/question/" in researcher_page and "/admin/auth/user/" not in researcher_page
    assert "/admin/auth/user/" in operator_page and "/admin/audits/question/" not in operator_page


def test_operator_can_grant_the_operator_role_in_the_admin(operator_client, make_user):
    from django.contrib.auth.models import Group

    user = make_user("annotator")
    page = operator_client.get(f"/admin/auth/user/{user.pk}/change/").content.decode()
    group = Group.objects.get(name="operator")
    assert f'value="{group.pk}"' in page


def test_the_token_admin_shows_no_digest_and_makes_no_tokens(operator_client, make_user):
    from knox.models import AuthToken

    instance, token = AuthToken.objects.create(user=make_user("annotator"))
    listing = operator_client.get("/admin/knox/authtoken/").content.decode()
    assert instance.token_key in listing and token not in listing
    # The digest is the row's primary key (in its links), never a column: a one-way hash, not the token.
    assert "column-digest" not in listing and "column-token_key" in listing
    assert operator_client.get("/admin/knox/authtoken/add/").status_code == 403
    detail = operator_client.get(f"/admin/knox/authtoken/{instance.pk}/change/").content.decode()
    assert token not in detail and "field-digest" not in detail and "field-token_key" in detail


def test_operator_revokes_a_token_in_the_admin(operator_client, make_user):
    from knox.models import AuthToken

    instance, _ = AuthToken.objects.create(user=make_user("annotator"))
    response = operator_client.post(f"/admin/knox/authtoken/{instance.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302
    assert not AuthToken.objects.filter(pk=instance.pk).exists()


def test_home_page_shows_role_navigation(researcher, annotator):
    from django.test import Client

    researcher_client, annotator_client = Client(), Client()
    researcher_client.force_login(researcher)
    annotator_client.force_login(annotator)
    researcher_page = researcher_client.get("/").content.decode()
    assert 'href="/system/"' in researcher_page and 'href="/admin/"' in researcher_page
    annotator_page = annotator_client.get("/").content.decode()
    assert 'href="/system/"' not in annotator_page and 'href="/admin/"' not in annotator_page
    assert "annotator" in annotator_page


def test_user_without_role_is_told_to_ask_for_one(client, django_user_model):
    user = django_user_model.objects.create_user("norole", password="pw-for-tests-1")
    client.force_login(user)
    assert "no role yet" in client.get("/").content.decode()


def test_a_researcher_cannot_raise_anyone_through_the_admin(researcher_client, researcher, make_user):
    target = make_user("annotator")
    for url in (f"/admin/auth/user/{researcher.pk}/change/", f"/admin/auth/user/{target.pk}/password/"):
        assert researcher_client.get(url).status_code == 403
    response = researcher_client.post(
        f"/admin/auth/user/{researcher.pk}/change/", {"username": researcher.username, "is_superuser": "on"}
    )
    assert response.status_code == 403
    researcher.refresh_from_db()
    assert not researcher.is_superuser


@pytest.mark.parametrize("value", ["99999999999999999999", "abc", "²"])
def test_a_role_that_is_not_an_id_is_a_form_error_in_the_admin(operator_client, make_user, value):
    """A many-to-many choice runs Django's pk__in, which is not bounded: a 20-digit group was an OverflowError."""
    from django.test import Client

    user = make_user("annotator")
    client = Client(raise_request_exception=False)
    client.cookies = operator_client.cookies
    joined = {"date_joined_0": "2026-01-01", "date_joined_1": "00:00:00"}
    form = {"username": user.username, "is_active": "on", "groups": [value], **joined}
    response = client.post(f"/admin/auth/user/{user.pk}/change/", form)
    assert response.status_code == 200  # the form again, with the error
    assert "is not a valid value" in response.content.decode()
    assert list(user.groups.values_list("name", flat=True)) == ["annotator"]
