"""django-axes: the fifth failed log-in in a row from one client address locks the account for that address;
the sixth attempt is refused. Behind reverse proxies the address is the real client's (TRUSTED_PROXY_COUNT).

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


def login_via_proxy(client, username, password, forwarded_for):
    """A log-in as the reverse proxy at 127.0.0.1 passes it on, naming the client in X-Forwarded-For."""
    return client.post(
        "/accounts/login/",
        {"username": username, "password": password},
        REMOTE_ADDR="127.0.0.1",
        HTTP_X_FORWARDED_FOR=forwarded_for,
    )


def test_behind_a_proxy_the_lockout_is_the_real_clients(client, make_user, settings):
    settings.TRUSTED_PROXY_COUNT = 1
    make_user("researcher", username="shared")
    for _ in range(4):
        assert login_via_proxy(client, "shared", "wrong-password", "10.0.0.66").status_code == 200
    assert login_via_proxy(client, "shared", "wrong-password", "10.0.0.66").status_code == 429
    assert login_via_proxy(client, "shared", "pw-for-tests-1", "10.0.0.66").status_code == 429

    # Another client behind the same proxy logs in.
    other = type(client)()
    assert login_via_proxy(other, "shared", "pw-for-tests-1", "10.0.0.77").status_code == 302


def test_a_client_cannot_escape_its_lockout_with_its_own_forwarded_header(client, make_user, settings):
    """The proxy appends the address it saw; what the client wrote before it is not trusted."""
    settings.TRUSTED_PROXY_COUNT = 1
    make_user("researcher", username="target")
    for attempt in range(5):
        login_via_proxy(client, "target", "wrong-password", f"192.0.2.{attempt}, 10.0.0.66")
    assert login_via_proxy(client, "target", "pw-for-tests-1", "198.51.100.9, 10.0.0.66").status_code == 429
    assert login_via_proxy(type(client)(), "target", "pw-for-tests-1", "10.0.0.77").status_code == 302


def test_without_a_trusted_proxy_the_forwarded_header_is_ignored(client, make_user, settings):
    settings.TRUSTED_PROXY_COUNT = 0
    make_user("annotator", username="direct")
    for attempt in range(5):
        login_via_proxy(client, "direct", "wrong-password", f"10.0.0.{attempt}")
    # Every try came from 127.0.0.1 whatever the header said: that address is locked out.
    assert login_via_proxy(client, "direct", "pw-for-tests-1", "10.0.0.99").status_code == 429


def test_the_token_endpoint_locks_out_the_real_client_too(make_user, settings):
    from rest_framework.test import APIClient

    settings.TRUSTED_PROXY_COUNT = 1
    make_user("annotator", username="scripted-behind-proxy")
    attacker = APIClient(REMOTE_ADDR="127.0.0.1", HTTP_X_FORWARDED_FOR="10.0.0.66")
    for _ in range(5):
        attacker.post("/api/auth/token/", {"username": "scripted-behind-proxy", "password": "nope"})
    right = {"username": "scripted-behind-proxy", "password": "pw-for-tests-1"}
    assert attacker.post("/api/auth/token/", right).status_code == 429
    owner = APIClient(REMOTE_ADDR="127.0.0.1", HTTP_X_FORWARDED_FOR="10.0.0.77")
    assert owner.post("/api/auth/token/", right).status_code == 200


def test_a_request_without_an_address_signs_in(client, make_user, settings):
    """A request built in code (force_login, a management command) has no REMOTE_ADDR; axes records None."""
    from django.test import RequestFactory

    from edufair_web.accounts.client_address import client_address

    settings.TRUSTED_PROXY_COUNT = 1
    request = RequestFactory().get("/")
    del request.META["REMOTE_ADDR"]
    assert client_address(request) is None
    client.force_login(make_user("annotator"))
    assert client.get("/").status_code == 200
