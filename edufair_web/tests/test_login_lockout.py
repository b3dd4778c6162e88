"""django-axes: the fifth failed log-in in a row locks the account; the sixth attempt is refused.

AXES_FAILURE_LIMIT = 5: the attempt that reaches the limit already answers with the lockout page.
"""

import pytest

pytestmark = pytest.mark.django_db


def login(client, username, password):
    return client.post("/accounts/login/", {"username": username, "password": password}, REMOTE_ADDR="10.1.2.3")


def test_sixth_login_in_a_row_after_five_failures_is_locked_out(client, make_user):
    make_user("annotator", username="victim")
    for _ in range(4):
        response = login(client, "victim", "wrong-password")
        assert response.status_code == 200
        assert "did not match" in response.content.decode()
    assert login(client, "victim", "wrong-password").status_code == 429

    response = login(client, "victim", "pw-for-tests-1")  # the right password, but too late
    assert response.status_code == 429
    assert "Too many failed log-ins" in response.content.decode()
    assert "_auth_user_id" not in client.session


def test_four_failures_then_the_right_password_logs_in(client, make_user):
    make_user("annotator", username="forgetful")
    for _ in range(4):
        login(client, "forgetful", "wrong-password")
    response = login(client, "forgetful", "pw-for-tests-1")
    assert response.status_code == 302
    assert client.session["_auth_user_id"]


def test_lockout_applies_to_the_api_token_endpoint_too(client, make_user):
    from rest_framework.test import APIClient

    make_user("annotator", username="scripted")
    api = APIClient(REMOTE_ADDR="10.9.9.9")
    for _ in range(4):
        assert api.post("/api/auth/token/", {"username": "scripted", "password": "nope"}).status_code == 400
    assert api.post("/api/auth/token/", {"username": "scripted", "password": "nope"}).status_code == 429
    sixth = api.post("/api/auth/token/", {"username": "scripted", "password": "pw-for-tests-1"})
    assert sixth.status_code == 429
    assert "token" not in sixth.content.decode()
