"""API tokens (django-rest-knox): obtained with a password, they open the API without a session, expire, die with
a password change, and their owner lists and revokes them. Only a digest is stored."""

from datetime import timedelta
from types import SimpleNamespace

import pytest
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from knox.models import AuthToken
from rest_framework.test import APIClient

from edufair_web.accounts import authentication

pytestmark = pytest.mark.django_db


def obtain(username: str, password: str = "pw-for-tests-1") -> dict:
    response = APIClient().post("/api/auth/token/", {"username": username, "password": password}, format="json")
    assert response.status_code == 200, response.content
    return response.json()


def api_with(token: str) -> APIClient:
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    return api


def test_token_from_password_opens_the_api(make_user):
    make_user("annotator", username="tok-user")
    token = obtain("tok-user")["token"]

    anonymous = APIClient()
    assert anonymous.get("/api/me/").status_code == 401

    me = api_with(token).get("/api/me/")
    assert me.status_code == 200
    assert me.json()["username"] == "tok-user"
    assert me.json()["roles"] == ["annotator"]


def test_the_token_is_stored_as_a_digest_only(make_user):
    user = make_user("annotator")
    token = obtain(user.username)["token"]
    stored = AuthToken.objects.get(user=user)
    assert token not in {stored.digest, stored.token_key} and token.startswith(stored.token_key)


def test_annotator_token_is_refused_on_researcher_endpoints(make_user):
    make_user("annotator", username="tok-annot")
    token = obtain("tok-annot")["token"]
    assert api_with(token).get("/api/workers/").status_code == 403


@pytest.mark.parametrize("header", ["Token not-a-real-token", "Token ", "Token a b", "Token \u00e9\u00e9\u00e9"])
def test_wrong_token_is_refused(header):
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=header)
    assert api.get("/api/me/").status_code == 401


def test_wrong_password_gets_no_token(make_user):
    user = make_user("annotator")
    response = APIClient().post("/api/auth/token/", {"username": user.username, "password": "nope"})
    assert response.status_code == 400
    assert "token" not in response.json()


def test_a_token_expires_after_its_lifetime(make_user, settings, monkeypatch):
    user = make_user("annotator")
    issued = timezone.now()
    reply = obtain(user.username)
    expiry = parse_datetime(reply["expiry"])
    lifetime = timedelta(hours=settings.API_TOKEN_TTL_HOURS)
    assert abs(expiry - (issued + lifetime)) < timedelta(seconds=30)

    def clock_at(moment):
        monkeypatch.setattr(authentication, "timezone", SimpleNamespace(now=lambda: moment))

    clock_at(expiry - timedelta(seconds=5))
    assert api_with(reply["token"]).get("/api/me/").status_code == 200
    clock_at(expiry + timedelta(seconds=1))
    assert api_with(reply["token"]).get("/api/me/").status_code == 401
    assert not AuthToken.objects.filter(user=user).exists()  # an expired token is deleted when it is presented


def test_a_password_change_revokes_every_token(make_user):
    user = make_user("researcher")
    first, second = obtain(user.username)["token"], obtain(user.username)["token"]
    other = make_user("annotator")
    kept = obtain(other.username)["token"]

    user.set_password("a-new-password-2")
    user.save()

    assert api_with(first).get("/api/me/").status_code == 401
    assert api_with(second).get("/api/me/").status_code == 401
    assert api_with(kept).get("/api/me/").status_code == 200
    assert api_with(obtain(user.username, "a-new-password-2")["token"]).get("/api/me/").status_code == 200


def test_saving_a_user_without_a_new_password_keeps_the_tokens(make_user):
    user = make_user("annotator")
    token = obtain(user.username)["token"]
    user.first_name = "Ada"
    user.save()
    assert api_with(token).get("/api/me/").status_code == 200


def test_create_user_resetting_a_password_revokes_the_tokens(make_user):
    from django.core.management import call_command

    user = make_user("annotator")
    token = obtain(user.username)["token"]
    call_command("create_user", user.username, "--role", "annotator", "--password", "reset-pass-3")
    assert api_with(token).get("/api/me/").status_code == 401


def test_the_owner_lists_and_revokes_one_token(make_user):
    user = make_user("annotator")
    current, spare = obtain(user.username), obtain(user.username)
    stranger_token = obtain(make_user("annotator").username)["token"]
    api = api_with(current["token"])

    listed = api.get("/api/auth/tokens/").json()
    assert len(listed) == 2
    assert {row["token_key"] for row in listed} == {current["token"][:15], spare["token"][:15]}
    assert [row["current"] for row in listed if row["token_key"] == current["token"][:15]] == [True]
    assert all(spare["token"] not in str(row) and current["token"] not in str(row) for row in listed)

    assert api.delete(f"/api/auth/tokens/{spare['token'][:15]}/").status_code == 204
    assert api_with(spare["token"]).get("/api/me/").status_code == 401
    assert api.get("/api/me/").status_code == 200
    # Someone else's token cannot be revoked (nor told apart from one that does not exist).
    assert api.delete(f"/api/auth/tokens/{stranger_token[:15]}/").status_code == 404
    assert api_with(stranger_token).get("/api/me/").status_code == 200


def test_the_owner_revokes_all_their_tokens(make_user):
    user = make_user("annotator")
    tokens = [obtain(user.username)["token"] for _ in range(3)]
    assert api_with(tokens[0]).delete("/api/auth/tokens/").status_code == 204
    assert all(api_with(token).get("/api/me/").status_code == 401 for token in tokens)


def test_a_signed_in_user_manages_tokens_from_the_session_too(client, make_user):
    user = make_user("annotator")
    obtain(user.username)
    client.force_login(user)
    listed = client.get("/api/auth/tokens/").json()
    assert [row["current"] for row in listed] == [False]


def test_token_authentication_is_one_sql_statement(make_user, django_assert_num_queries):
    token = obtain(make_user("annotator").username)["token"]
    api = api_with(token)
    with django_assert_num_queries(1):  # token, user and roles; /api/me/ reads nothing else
        assert api.get("/api/me/").status_code == 200
