"""Who may open what: anonymous users go to log in; annotators are kept out of researcher pages."""

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


@pytest.mark.parametrize("url", ["/", "/system/", "/admin/", "/admin/auth/user/", "/api/workers/", "/api/me/"])
def test_researcher_opens_researcher_pages(researcher_client, url):
    assert researcher_client.get(url).status_code == 200


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
