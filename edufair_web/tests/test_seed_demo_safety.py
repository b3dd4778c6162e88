"""`seed_demo` on a production install: refused with DEBUG off unless told `--i-know-this-is-production`, and it never
resets an existing user's password or role (a real `operator` keeps theirs), saying so instead of printing the demo
password that no longer works."""

from io import StringIO

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command

from edufair_web.accounts.demo import DEMO_USERS, demo_users_seed
from edufair_web.accounts.management.commands.seed_demo import demo_logins_text
from edufair_web.accounts.roles import user_roles

pytestmark = pytest.mark.django_db


def test_seed_demo_refuses_with_debug_off(settings):
    settings.DEBUG = False
    with pytest.raises(CommandError, match="refuses with DEBUG off.*--i-know-this-is-production"):
        call_command("seed_demo", small=True, stdout=StringIO())
    assert not User.objects.exists()


def test_existing_users_keep_their_password_and_role(make_user):
    real = make_user("researcher", username="operator")
    real.set_password("the real operator's own passphrase")
    real.save()

    users = demo_users_seed()
    real.refresh_from_db()
    assert real.check_password("the real operator's own passphrase")
    assert user_roles(real) == {"researcher"}
    assert dict((name, password) for name, _, password in users)["operator"] == ""
    for username, _, password in DEMO_USERS:
        if username != "operator":
            assert User.objects.get(username=username).check_password(password)

    logins = demo_logins_text(demo_users_seed())  # a second run changes nothing either
    assert "operator     user: operator     password: unchanged (the user existed before" in logins
    assert "demo-operator" not in logins and "password: demo-researcher" in logins
    real.refresh_from_db()
    assert real.check_password("the real operator's own passphrase")
