"""Ranks in the admin: an operator changes only whom `people.may_manage` allows, as the people API does, and grants
nobody (themselves included) superuser status, permissions or a group beyond their rank; superusers keep all."""

import pytest
from django.contrib.auth.models import Group, Permission, User
from django.test import Client

from edufair_web.accounts.people import may_manage

pytestmark = pytest.mark.django_db

PASSWORD = {"password1": "A-long-pass-1", "password2": "A-long-pass-1", "usable_password": "true"}


@pytest.fixture
def operator(make_user):
    return make_user("operator")


@pytest.fixture
def operator_client(operator):
    client = Client()
    client.force_login(operator)
    return client


@pytest.fixture
def superuser(django_user_model):
    return django_user_model.objects.create_superuser("root", password="pw-for-tests-1")


def change_form(user: User, **fields) -> dict:
    """What the admin's change form posts for `user` (a full form), with `fields` added or replaced."""
    form = {"username": user.username, "is_active": "on", "date_joined_0": "2026-01-01", "date_joined_1": "00:00:00"}
    form["groups"] = [str(pk) for pk in user.groups.values_list("pk", flat=True)]
    return {**form, **fields}


def test_an_operator_grants_no_superuser_staff_or_permission(operator_client, make_user):
    target = make_user("annotator")
    url = f"/admin/auth/user/{target.pk}/change/"
    page = operator_client.get(url).content.decode()
    assert 'name="username"' in page and 'name="groups"' in page  # the form is there, to edit
    assert 'name="is_superuser"' not in page and 'name="user_permissions"' not in page and 'name="is_staff"' not in page
    permission = Permission.objects.get(codename="change_user")
    forged = change_form(target, email="a@example.org", is_superuser="on", is_staff="on")
    response = operator_client.post(url, {**forged, "user_permissions": [str(permission.pk)]})
    assert response.status_code == 302
    target.refresh_from_db()
    assert target.email == "a@example.org"  # the fields offered are saved, the removed ones are not
    assert not target.is_superuser and not target.is_staff and not target.user_permissions.exists()


def test_an_operator_offers_role_groups_only_and_keeps_the_others(operator_client, make_user):
    target = make_user("annotator")
    powerful = Group.objects.create(name="can-change-users")
    powerful.permissions.add(Permission.objects.get(codename="change_user"))
    kept = Group.objects.create(name="newsletter")
    target.groups.add(kept)
    url = f"/admin/auth/user/{target.pk}/change/"
    assert f'value="{powerful.pk}"' not in operator_client.get(url).content.decode()
    refused = operator_client.post(url, change_form(target, groups=[str(powerful.pk)]))
    assert refused.status_code == 200 and "is not one of the available choices" in refused.content.decode()
    assert not target.groups.filter(pk=powerful.pk).exists()

    researcher_group = Group.objects.get(name="researcher")
    moved = operator_client.post(url, change_form(target, groups=[str(researcher_group.pk)]))
    assert moved.status_code == 302
    target.refresh_from_db()
    assert set(target.groups.values_list("name", flat=True)) == {"researcher", "newsletter"}
    assert target.is_staff  # staff follows the role, as `user_set_role` makes it


def test_an_operator_cannot_set_a_superusers_password_or_change_them(operator_client, superuser):
    url = f"/admin/auth/user/{superuser.pk}/password/"
    assert operator_client.get(url).status_code == 403
    assert operator_client.post(url, PASSWORD).status_code == 403
    change = f"/admin/auth/user/{superuser.pk}/change/"
    assert "Superuser status" in operator_client.get(change).content.decode()  # seen, read-only
    assert operator_client.post(change, change_form(superuser, is_active="")).status_code == 403
    assert operator_client.post(f"/admin/auth/user/{superuser.pk}/delete/", {"post": "yes"}).status_code == 403
    superuser.refresh_from_db()
    assert superuser.check_password("pw-for-tests-1") and superuser.is_active


def test_an_operator_cannot_raise_themselves(operator_client, operator):
    change = f"/admin/auth/user/{operator.pk}/change/"
    forged = change_form(
        operator, is_superuser="on", groups=[str(pk) for pk in Group.objects.values_list("pk", flat=True)]
    )
    assert operator_client.post(change, forged).status_code == 403
    assert operator_client.get(f"/admin/auth/user/{operator.pk}/password/").status_code == 403
    assert operator_client.post(f"/admin/auth/user/{operator.pk}/password/", PASSWORD).status_code == 403
    operator.refresh_from_db()
    assert not operator.is_superuser and list(operator.groups.values_list("name", flat=True)) == ["operator"]
    assert operator.check_password("pw-for-tests-1")


def test_a_bulk_delete_with_a_user_beyond_rank_deletes_nobody(operator_client, make_user, superuser):
    annotator = make_user("annotator")
    action = {"action": "delete_selected", "_selected_action": [str(annotator.pk), str(superuser.pk)]}
    confirm = operator_client.post("/admin/auth/user/", action)
    assert confirm.status_code == 200 and confirm.context["perms_lacking"]
    assert operator_client.post("/admin/auth/user/", {**action, "post": "yes"}).status_code == 403
    assert User.objects.filter(pk__in=[annotator.pk, superuser.pk]).count() == 2


def test_adding_a_user_names_a_role_and_grants_nothing_else(operator_client):
    page = operator_client.get("/admin/auth/user/add/").content.decode()
    assert 'name="role"' in page and 'name="is_superuser"' not in page
    form = {"username": "new-annotator", **PASSWORD, "role": "annotator", "is_superuser": "on", "is_staff": "on"}
    assert operator_client.post("/admin/auth/user/add/", {**form, "role": ""}).status_code == 200  # a role is required
    response = operator_client.post("/admin/auth/user/add/", form)
    assert response.status_code == 302
    made = User.objects.get(username="new-annotator")
    assert not made.is_superuser and not made.is_staff
    assert list(made.groups.values_list("name", flat=True)) == ["annotator"]
    assert operator_client.get(response["Location"]).context["has_change_permission"]  # theirs to manage next


def test_an_operator_sees_the_groups_and_changes_none(operator_client):
    researcher_group = Group.objects.get_or_create(name="researcher")[0]
    assert operator_client.get("/admin/auth/group/").status_code == 200
    renamed = operator_client.post(f"/admin/auth/group/{researcher_group.pk}/change/", {"name": "x"})
    assert renamed.status_code == 403
    assert operator_client.post("/admin/auth/group/add/", {"name": "researchers-too"}).status_code == 403
    assert operator_client.post(f"/admin/auth/group/{researcher_group.pk}/delete/", {"post": "yes"}).status_code == 403
    assert Group.objects.filter(name="researcher").exists() and not Group.objects.filter(name="x").exists()


def test_a_superuser_keeps_full_powers(superuser, make_user):
    client = Client()
    client.force_login(superuser)
    target = make_user("annotator")
    url = f"/admin/auth/user/{target.pk}/change/"
    assert 'name="is_superuser"' in client.get(url).content.decode()
    assert client.post(url, change_form(target, is_superuser="on", is_staff="on")).status_code == 302
    assert client.post(f"/admin/auth/user/{target.pk}/password/", PASSWORD).status_code == 302
    target.refresh_from_db()
    assert target.is_superuser and target.check_password(PASSWORD["password1"])
    assert client.post("/admin/auth/group/add/", {"name": "auditors"}).status_code == 302


def test_the_admin_and_the_people_api_agree_on_whom_an_operator_manages(
    operator_client, operator, make_user, superuser
):
    targets = [operator, superuser, User.objects.create_user("no-role", password="pw-for-tests-1")]
    targets += [make_user(role) for role in ("operator", "researcher", "adjudicator", "annotator")]
    answers = {}
    for target in targets:
        expected = may_manage(by=operator, user=target)
        invite = operator_client.post(f"/api/annotation/people/{target.pk}/invite/", content_type="application/json")
        password = operator_client.get(f"/admin/auth/user/{target.pk}/password/")
        delete = operator_client.get(f"/admin/auth/user/{target.pk}/delete/")
        answers[target.username] = (expected, invite.status_code, password.status_code, delete.status_code)
        assert (invite.status_code, password.status_code, delete.status_code) == (
            (200, 200, 200) if expected else (400, 403, 403)
        ), answers
    assert {a[0] for a in answers.values()} == {True, False}  # both answers are among the pairs
