"""DRF token authentication: a token obtained with a password opens the API without a session."""

import pytest
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db


def test_token_from_password_opens_the_api(make_user):
    make_user("annotator", username="tok-user")
    api = APIClient()
    response = api.post("/api/auth/token/", {"username": "tok-user", "password": "pw-for-tests-1"}, format="json")
    assert response.status_code == 200
    token = response.json()["token"]

    anonymous = APIClient()
    assert anonymous.get("/api/me/").status_code == 401

    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    me = api.get("/api/me/")
    assert me.status_code == 200
    assert me.json()["username"] == "tok-user"
    assert me.json()["roles"] == ["annotator"]


def test_annotator_token_is_refused_on_researcher_endpoints(make_user):
    make_user("annotator", username="tok-annot")
    api = APIClient()
    token = api.post("/api/auth/token/", {"username": "tok-annot", "password": "pw-for-tests-1"}).json()["token"]
    api.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    assert api.get("/api/workers/").status_code == 403


def test_wrong_token_is_refused():
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION="Token not-a-real-token")
    assert api.get("/api/me/").status_code == 401
