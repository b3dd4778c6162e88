"""Throttles: password log-ins per client address (the log-in page and the token endpoint share one budget), and
writes and expensive reads per user; 429 with Retry-After. Rates are the settings' THROTTLE_RATES."""

import pytest
from django.test import Client
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db


@pytest.fixture
def rates(settings):
    def set_rates(**scopes):
        settings.THROTTLE_RATES = {"login": None, "write": None, "expensive_read": None, **scopes}

    return set_rates


def token_request(api, username: str, password: str = "a-wrong-password"):
    return api.post("/api/auth/token/", {"username": username, "password": password})


def test_anonymous_token_requests_with_fresh_usernames_are_throttled(rates):
    """Each request with an unknown username costs a password hash and escapes the per-username lockout."""
    rates(login="3/minute")
    api = APIClient(REMOTE_ADDR="203.0.113.5")
    assert [token_request(api, f"nobody-{n}").status_code for n in range(3)] == [400, 400, 400]
    refused = token_request(api, "nobody-4")
    assert refused.status_code == 429
    assert 0 < int(refused["Retry-After"]) <= 60
    assert "throttled" in refused.json()["detail"].lower()
    # Another client address has its own budget.
    assert token_request(APIClient(REMOTE_ADDR="203.0.113.6"), "nobody-5").status_code == 400


def test_guessing_invitation_links_shares_the_log_in_budget(rates):
    """The invitation-accept API takes a password from someone not signed in, as the token endpoint does: each
    guess at a link is one request of the same per-address log-in budget, not a free try."""
    rates(login="3/minute")
    api = APIClient(REMOTE_ADDR="203.0.113.8")
    guess = {"password": "a-long-enough-password-1"}
    answers = [api.post(f"/api/annotation/people/welcome/MQ/guess-{n}/", guess).status_code for n in range(3)]
    assert answers == [400, 400, 400]
    assert token_request(api, "nobody").status_code == 429  # the budget is the log-in one
    refused = api.post("/api/annotation/people/welcome/MQ/guess-4/", guess)
    assert refused.status_code == 429 and 0 < int(refused["Retry-After"]) <= 60


def test_a_throttled_client_gets_no_token_even_with_the_right_password(rates, make_user):
    rates(login="2/minute")
    user = make_user("annotator")
    api = APIClient(REMOTE_ADDR="203.0.113.7")
    token_request(api, "someone-else")
    token_request(api, "someone-else-2")
    refused = token_request(api, user.username, "pw-for-tests-1")
    assert refused.status_code == 429 and "token" not in refused.json()


def test_the_login_page_and_the_token_endpoint_share_the_budget(rates):
    rates(login="3/minute")
    page = Client(REMOTE_ADDR="203.0.113.8")
    api = APIClient(REMOTE_ADDR="203.0.113.8")
    assert page.post("/accounts/login/", {"username": "a", "password": "b"}).status_code == 200
    assert token_request(api, "c").status_code == 400
    assert page.post("/accounts/login/", {"username": "d", "password": "e"}).status_code == 200
    refused = page.post("/accounts/login/", {"username": "f", "password": "g"})
    assert refused.status_code == 429
    assert 0 < int(refused["Retry-After"]) <= 60
    assert "Too many log-in attempts" in refused.content.decode()
    assert token_request(api, "h").status_code == 429
    # Showing the form is not a log-in attempt.
    assert page.get("/accounts/login/").status_code == 200


def test_behind_a_proxy_the_login_budget_is_the_real_clients(rates, settings):
    rates(login="1/minute")
    settings.TRUSTED_PROXY_COUNT = 1
    first = APIClient(REMOTE_ADDR="127.0.0.1", HTTP_X_FORWARDED_FOR="10.0.0.66")
    assert token_request(first, "x").status_code == 400
    assert token_request(first, "y").status_code == 429
    assert token_request(APIClient(REMOTE_ADDR="127.0.0.1", HTTP_X_FORWARDED_FOR="10.0.0.77"), "z").status_code == 400


def test_writes_are_throttled_per_user(rates, make_user):
    rates(write="2/minute")
    first, other = APIClient(), APIClient()
    first.force_authenticate(make_user("annotator"))
    other.force_authenticate(make_user("annotator"))
    # Revoking all of one's tokens: a write any role may make, as often as it likes.
    assert [first.delete("/api/auth/tokens/").status_code for _ in range(3)] == [204, 204, 429]
    assert int(first.delete("/api/auth/tokens/")["Retry-After"]) > 0
    # Reads are not writes, and another user has their own budget.
    assert first.get("/api/auth/tokens/").status_code == 200
    assert other.delete("/api/auth/tokens/").status_code == 204


def test_expensive_reads_are_throttled_per_user_and_cheap_reads_are_not(rates, make_user):
    rates(expensive_read="1/minute")
    researcher = APIClient()
    researcher.force_authenticate(make_user("researcher"))
    assert researcher.get("/api/schema/").status_code == 200
    refused = researcher.get("/api/schema/")
    assert refused.status_code == 429 and int(refused["Retry-After"]) > 0
    assert [researcher.get("/api/me/").status_code for _ in range(3)] == [200, 200, 200]


def test_a_rate_of_none_switches_a_throttle_off(rates):
    rates(login=None)
    api = APIClient(REMOTE_ADDR="203.0.113.9")
    assert {token_request(api, f"n{n}").status_code for n in range(5)} == {400}


def test_rates_and_the_token_lifetime_come_from_the_environment(tmp_path):
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if not k.startswith(("THROTTLE_", "API_TOKEN_TTL"))}
    env.update(
        DEBUG="1",
        EDUFAIR_DATA_DIR=str(tmp_path),
        THROTTLE_LOGIN_RATE="7/hour",
        THROTTLE_WRITE_RATE="off",
        THROTTLE_CROWD_ENTRY_RATE="5/hour",
    )
    code = "from edufair_web import settings as s; print(s.THROTTLE_RATES, s.REST_KNOX['TOKEN_TTL'])"
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == (
        "{'login': '7/hour', 'write': None, 'expensive_read': '120/minute', 'crowd_entry': '5/hour', "
        "'crowd_link': '120/minute'} 10:00:00"
    )
    env["API_TOKEN_TTL_HOURS"] = "0"
    refused = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert refused.returncode != 0 and "API_TOKEN_TTL_HOURS must be a positive number" in refused.stderr
    env.update(API_TOKEN_TTL_HOURS="10", THROTTLE_LOGIN_RATE="30 per minute")
    refused = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert refused.returncode != 0 and "THROTTLE_LOGIN_RATE='30 per minute': a rate is N/second" in refused.stderr


def test_cache_url_names_the_redis_cache_the_processes_share(tmp_path):
    import os
    import subprocess
    import sys

    env = dict(os.environ, DEBUG="1", EDUFAIR_DATA_DIR=str(tmp_path), CACHE_URL="redis://cache.internal:6379/3")
    code = "from edufair_web import settings as s; c = s.CACHES['default']; print(c['BACKEND'], c['LOCATION'])"
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["django.core.cache.backends.redis.RedisCache", "redis://cache.internal:6379/3"]


@pytest.mark.services
def test_with_redis_the_counts_are_where_every_process_reads_them(rates, settings):
    """Another web process opens its own connection to the same Redis database and finds the same counts."""
    import uuid

    import redis
    from django.core.cache.backends.redis import RedisCache

    from conftest import service_missing

    url = "redis://127.0.0.1:6379/13"  # CI's Redis (.ci/run); its broker is database 15
    try:
        redis.Redis.from_url(url, socket_connect_timeout=1).ping()
    except redis.exceptions.ConnectionError:
        service_missing(f"Redis at {url}")
    prefix = f"test-{uuid.uuid4().hex}"
    settings.CACHES = {
        **settings.CACHES,
        "default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": url, "KEY_PREFIX": prefix},
    }
    rates(login="2/minute")
    try:
        api = APIClient(REMOTE_ADDR="203.0.113.10")
        assert [token_request(api, f"r{n}").status_code for n in range(3)] == [400, 400, 429]
        other_process = RedisCache(url, {"KEY_PREFIX": prefix})
        assert len(other_process.get("throttle_login_203.0.113.10")) == 2
    finally:
        client = redis.Redis.from_url(url)
        for key in client.scan_iter(f"{prefix}:*"):
            client.delete(key)


# The routes that take a password from someone not yet signed in: the log-in budget, per client address.
LOGIN_ROUTES = {"api-token", "annotation-invitation-accept"}


def test_every_api_view_is_throttled():
    """The write and expensive-read throttles are DRF's defaults: a view that set its own throttle classes would
    drop them. Only the routes that take a password before any user is known have others (the log-in budget)."""
    from django.urls import URLPattern, URLResolver, get_resolver
    from rest_framework.views import APIView

    from edufair_web.accounts.throttles import (
        EXPENSIVE_READS,
        ExpensiveReadRateThrottle,
        LoginRateThrottle,
        UserWriteRateThrottle,
    )

    def views(patterns):
        for entry in patterns:
            if isinstance(entry, URLResolver):
                yield from views(entry.url_patterns)
            elif isinstance(entry, URLPattern):
                yield entry.name, getattr(entry.callback, "cls", None)

    names, unthrottled, api_views = set(), [], 0
    for name, view in views(get_resolver().url_patterns):
        names.add(name)
        if view is None or not issubclass(view, APIView):
            continue
        api_views += 1
        expected = {LoginRateThrottle} if name in LOGIN_ROUTES else {UserWriteRateThrottle, ExpensiveReadRateThrottle}
        if not expected <= set(view.throttle_classes):
            unthrottled.append(f"{name}: {view.__name__}")
    assert api_views > 100
    assert unthrottled == []
    assert EXPENSIVE_READS <= names, f"expensive reads no route is named: {EXPENSIVE_READS - names}"
