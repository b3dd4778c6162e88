"""`manage.py create_user` creates users with one role; the role groups come from a data migration."""

import pytest
from django.contrib.auth.models import Group, User
from django.core.management import CommandError, call_command

from edufair_web.accounts.roles import ROLES, has_role

pytestmark = pytest.mark.django_db


def test_role_groups_exist_after_migrations():
    assert set(Group.objects.filter(name__in=ROLES).values_list("name", flat=True)) == set(ROLES)


def test_create_user_with_role_and_reset(capsys):
    call_command("create_user", "alice", "--role", "adjudicator", "--password", "s3cret-pass-1")
    alice = User.objects.get(username="alice")
    assert alice.check_password("s3cret-pass-1")
    assert has_role(alice, "adjudicator") and not has_role(alice, "researcher")
    assert not alice.is_staff

    call_command("create_user", "alice", "--role", "researcher")
    alice = User.objects.get(username="alice")
    printed = capsys.readouterr().out.strip().splitlines()[-1]
    assert printed.startswith("alice (researcher) password: ")
    assert alice.check_password(printed.rsplit(" ", 1)[-1])
    assert list(alice.groups.values_list("name", flat=True)) == ["researcher"]
    assert alice.is_staff


def test_create_an_operator():
    call_command("create_user", "olga", "--role", "operator", "--password", "s3cret-pass-2")
    olga = User.objects.get(username="olga")
    assert has_role(olga, "operator") and not has_role(olga, "researcher")
    assert olga.is_staff and not olga.is_superuser


def test_unknown_role_is_refused():
    with pytest.raises(CommandError):
        call_command("create_user", "bob", "--role", "overlord")
