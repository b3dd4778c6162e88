"""People from the UI and the API: who may create, invite and deactivate whom, and the one-time invitation link
(Django's password-reset token: it expires, works once, and the password must pass Django's validators)."""

import re

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from edufair_web.accounts.people import PeopleError, person_create, person_deactivate, person_invite_path

pytestmark = pytest.mark.django_db

STRONG = "a-long-passphrase-9421"


def client_for(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def accept(client: Client, link: str, password: str = STRONG):
    """Follow the link (Django moves the token into the session and redirects), then post the password."""
    landing = client.get(link, follow=True)
    form_url = landing.redirect_chain[-1][0] if landing.redirect_chain else link
    return landing, client.post(form_url, {"new_password1": password, "new_password2": password})


def test_the_link_sets_a_password_once_and_signs_the_invitee_in(researcher):
    page = client_for(researcher).post("/annotation/people/", {"username": "ann-new", "role": "annotator"})
    assert page.status_code == 200
    link = re.search(r"http://testserver(/annotation/people/welcome/[^<\s]+)", page.content.decode()).group(1)
    invitee = User.objects.get(username="ann-new")
    assert not invitee.has_usable_password()
    assert invitee.groups.filter(name="annotator").exists()

    browser = Client()
    landing, done = accept(browser, link)
    assert landing.context["validlink"] is True
    assert done.status_code == 302 and done["Location"] == "/"
    invitee.refresh_from_db()
    assert invitee.check_password(STRONG)
    assert browser.get("/api/me/").json()["username"] == "ann-new"  # signed in by the page

    again = Client().get(link, follow=True)
    assert again.context["validlink"] is False  # the token hashed the old password: used once, gone
    assert "not valid" in again.content.decode()


def test_the_password_must_pass_the_validators(researcher):
    user = person_create(by=researcher, username="ann-weak", role="annotator")
    _, done = accept(Client(), person_invite_path(by=researcher, user=user), password="12345678")
    assert done.status_code == 200
    errors = done.context["form"].errors["new_password2"]
    assert any("too common" in e for e in errors) and any("entirely numeric" in e for e in errors)
    user.refresh_from_db()
    assert not user.has_usable_password()


def test_an_api_client_sets_the_password_through_the_link_and_gets_a_token(researcher):
    created = client_for(researcher).post(
        "/api/annotation/people/", {"username": "ann-api", "role": "annotator"}, content_type="application/json"
    )
    link = created.json()["invite_url"]
    accept_url = "/api" + re.search(r"(/annotation/people/welcome/[^/]+/[^/]+/)$", link).group(1)
    client = APIClient()
    weak = client.post(accept_url, {"password": "12345678"}, format="json")
    assert weak.status_code == 400 and any("too common" in m for m in weak.json()["password"])
    invitee = User.objects.get(username="ann-api")
    assert not invitee.has_usable_password()

    done = client.post(accept_url, {"password": STRONG}, format="json")
    assert done.status_code == 200, done.content
    assert done.json()["username"] == "ann-api"
    invitee.refresh_from_db()
    assert invitee.check_password(STRONG)
    me = APIClient(HTTP_AUTHORIZATION=f"Token {done.json()['token']}").get("/api/me/")
    assert me.json()["username"] == "ann-api"

    again = client.post(accept_url, {"password": "another-long-passphrase-77"}, format="json")
    assert again.status_code == 400 and "not valid" in again.json()["detail"]  # used once, gone
    assert Client().get(link, follow=True).context["validlink"] is False  # and the page agrees
    invitee.refresh_from_db()
    assert invitee.check_password(STRONG)


@pytest.mark.parametrize("path", ["MQ/not-a-token", "bm90LWFuLWlk/x", "OTk5OTk5OTk5OTk5OTk5OTk5OTk5OTk5/abc-def"])
def test_a_bad_link_is_refused_by_the_api(path):
    response = APIClient().post(f"/api/annotation/people/welcome/{path}/", {"password": STRONG}, format="json")
    assert response.status_code == 400 and "not valid" in response.json()["detail"]


def test_a_deactivated_invitee_cannot_use_the_link_through_the_api(researcher):
    user = person_create(by=researcher, username="ann-gone-api", role="annotator")
    link = person_invite_path(by=researcher, user=user)
    person_deactivate(by=researcher, user=user)
    response = APIClient().post(f"/api{link}", {"password": STRONG}, format="json")
    assert response.status_code == 400
    user.refresh_from_db()
    assert not user.has_usable_password()


def test_the_link_expires(researcher, settings):
    user = person_create(by=researcher, username="ann-late", role="annotator")
    link = person_invite_path(by=researcher, user=user)
    settings.PASSWORD_RESET_TIMEOUT = -1  # every token is older than this
    assert Client().get(link, follow=True).context["validlink"] is False


def test_a_deactivated_invitee_cannot_use_the_link(researcher):
    user = person_create(by=researcher, username="ann-gone", role="annotator")
    link = person_invite_path(by=researcher, user=user)
    person_deactivate(by=researcher, user=user)
    assert Client().get(link, follow=True).context["validlink"] is False
    with pytest.raises(PeopleError, match="deactivated"):
        person_invite_path(by=researcher, user=user)


@pytest.mark.parametrize(
    ("by_role", "role", "allowed"),
    [
        ("researcher", "annotator", True),
        ("researcher", "adjudicator", True),
        ("researcher", "researcher", False),
        ("researcher", "operator", False),
        ("operator", "researcher", True),
        ("operator", "operator", True),
        ("operator", "annotator", True),
    ],
)
def test_who_may_create_whom_through_the_api(make_user, by_role, role, allowed):
    response = client_for(make_user(by_role)).post(
        "/api/annotation/people/", {"username": f"new-{role}", "role": role}, content_type="application/json"
    )
    if allowed:
        assert response.status_code == 201, response.content
        body = response.json()
        assert body["role"] == role and "/annotation/people/welcome/" in body["invite_url"]
    else:
        assert response.status_code == 400
        assert f"may not create a user with the {role} role" in response.json()["detail"]
        assert not User.objects.filter(username=f"new-{role}").exists()


def test_researchers_deactivate_annotators_but_not_researchers(make_user, researcher):
    annotator, colleague = make_user("annotator"), make_user("researcher")
    annotator_session = client_for(annotator)
    assert annotator_session.get("/api/me/").status_code == 200
    client = client_for(researcher)
    refused = client.post(f"/api/annotation/people/{colleague.pk}/deactivate/")
    assert refused.status_code == 400 and "may not deactivate" in refused.json()["detail"]
    assert client.post(f"/api/annotation/people/{researcher.pk}/deactivate/").status_code == 400  # not oneself
    done = client.post(f"/api/annotation/people/{annotator.pk}/deactivate/")
    assert done.status_code == 200 and done.json()["is_active"] is False
    colleague.refresh_from_db()
    assert colleague.is_active
    assert annotator_session.get("/api/me/").status_code in (401, 403)  # their session stopped working


def test_operators_deactivate_researchers_from_the_page(make_user):
    operator, colleague = make_user("operator"), make_user("researcher")
    response = client_for(operator).post(f"/annotation/people/{colleague.pk}/deactivate/")
    assert response.status_code == 302
    colleague.refresh_from_db()
    assert colleague.is_active is False


def test_look_up_by_username_and_a_new_invitation(make_user, researcher):
    make_user("annotator", username="maria-annot")
    make_user("operator", username="maria-ops")
    client = client_for(researcher)
    found = client.get("/api/annotation/people/?username=MARIA").json()
    assert [p["username"] for p in found] == ["maria-annot"]  # researchers do not see operators
    assert "maria-annot" in client.get("/annotation/people/?q=maria").content.decode()
    invited = person_create(by=researcher, username="maria-new", role="annotator")
    invite = client.post(f"/api/annotation/people/{invited.pk}/invite/")
    assert invite.status_code == 200 and invite.json()["expires_in_seconds"] == 72 * 3600


def test_only_operators_send_a_link_to_someone_who_has_a_password(make_user, researcher):
    annotator = make_user("annotator")  # has a password
    refused = client_for(researcher).post(f"/api/annotation/people/{annotator.pk}/invite/")
    assert refused.status_code == 400 and "an operator can reset it" in refused.json()["detail"]
    operator = client_for(make_user("operator"))
    assert operator.post(f"/api/annotation/people/{annotator.pk}/invite/").status_code == 200
    invite_form = f'action="/annotation/people/{annotator.pk}/invite/"'
    assert invite_form not in client_for(researcher).get(f"/annotation/people/?q={annotator.username}").content.decode()
    page = operator.get(f"/annotation/people/?q={annotator.username}").content.decode()
    assert invite_form in page and "Password reset link" in page


@pytest.mark.parametrize(
    "body",
    [{}, {"username": "x y", "role": "annotator"}, {"username": "ok", "role": "boss"}, {"username": "", "role": "x"}],
)
def test_bad_creations_are_400s(researcher, body):
    response = client_for(researcher).post("/api/annotation/people/", body, content_type="application/json")
    assert response.status_code == 400


def test_a_taken_username_is_refused(make_user, researcher):
    make_user("annotator", username="taken")
    page = client_for(researcher).post("/annotation/people/", {"username": "Taken", "role": "annotator"})
    assert page.status_code == 400 and "is taken" in page.content.decode()


@pytest.mark.parametrize("by_role", ["researcher", "operator"])
def test_the_create_form_opens_on_the_annotator_role(make_user, by_role):
    page = client_for(make_user(by_role)).get(reverse("annotation:people")).content.decode()
    selected = re.findall(r'<option value="(\w+)"[^>]*selected', page)
    assert selected == ["annotator"]
