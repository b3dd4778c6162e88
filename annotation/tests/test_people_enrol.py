"""Enrolment by username, from the page and the API: a pasted list enrols everyone or nobody (unknown,
deactivated and non-annotator names are reported together), and a replacement is named by username."""

import pytest
from django.test import Client

from annotation.models import Enrollment
from annotation.services.enrollment import usernames_parse

from .main_setup import build_main_stage

pytestmark = pytest.mark.django_db


def client_for(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_usernames_parse_accepts_lines_commas_and_spaces():
    assert usernames_parse("ann1\nann2, ann3  ann1\n\n") == ["ann1", "ann2", "ann3"]


def test_a_pasted_list_enrols_everyone(make_user, researcher):
    s = build_main_stage(items=2, overlap=2)
    names = [make_user("annotator").username for _ in range(3)]
    response = client_for(researcher).post(
        f"/annotation/people/stages/{s.stage.pk}/", {"usernames": "\n".join(names), "subject": "maths"}
    )
    assert response.status_code == 302
    enrolled = Enrollment.objects.filter(stage=s.stage).order_by("user__username")
    assert sorted(e.user.username for e in enrolled) == sorted(names)
    assert {e.subject for e in enrolled} == {"maths"}


def test_one_bad_name_enrols_nobody_and_every_problem_is_named(make_user, researcher):
    s = build_main_stage(items=2, overlap=2)
    good = make_user("annotator")
    gone = make_user("annotator")
    gone.is_active = False
    gone.save()
    adjudicator = make_user("adjudicator")
    text = f"{good.username}\nnobody-here\n{gone.username}\n{adjudicator.username}"
    page = client_for(researcher).post(f"/annotation/people/stages/{s.stage.pk}/", {"usernames": text})
    assert page.status_code == 400
    body = page.content.decode()
    assert "Nobody was enrolled" in body
    assert "unknown: nobody-here" in body
    assert f"deactivated: {gone.username}" in body
    assert f"without the annotator role: {adjudicator.username}" in body
    assert not Enrollment.objects.filter(stage=s.stage).exists()


def test_the_api_enrols_a_list_or_refuses_it_whole(make_user, researcher):
    s = build_main_stage(items=2, overlap=2)
    first, second = make_user("annotator"), make_user("annotator")
    client = client_for(researcher)
    url = f"/api/annotation/people/stages/{s.stage.pk}/enrol/"
    refused = client.post(url, {"usernames": [first.username, "ghost"]}, content_type="application/json")
    assert refused.status_code == 400 and "unknown: ghost" in refused.json()["usernames"]
    assert not Enrollment.objects.filter(stage=s.stage).exists()
    done = client.post(url, {"usernames": [first.username, second.username]}, content_type="application/json")
    assert done.status_code == 201
    assert {row["user"] for row in done.json()} == {first.pk, second.pk}
    for bad in ({}, {"usernames": []}, {"usernames": "ann"}, {"usernames": [1, {"a": 1}]}):
        assert client.post(url, bad, content_type="application/json").status_code == 400


def test_a_replacement_is_named_by_username_on_the_page_and_the_api(make_user, researcher):
    s = build_main_stage(items=2, overlap=2)
    leaver, newcomer, third = (make_user("annotator") for _ in range(3))
    client = client_for(researcher)
    client.post(f"/annotation/people/stages/{s.stage.pk}/", {"usernames": f"{leaver.username} {third.username}"})
    leaving = Enrollment.objects.get(stage=s.stage, user=leaver)
    unknown = client.post(f"/annotation/people/enrollments/{leaving.pk}/replace/", {"replacement": "ghost"})
    assert unknown.status_code == 302
    leaving.refresh_from_db()
    assert leaving.status == Enrollment.Status.TRAINING  # nothing done
    client.post(f"/annotation/people/enrollments/{leaving.pk}/replace/", {"replacement": newcomer.username})
    leaving.refresh_from_db()
    assert leaving.status == Enrollment.Status.REPLACED and leaving.replaced_by.user == newcomer
    page = client.get(f"/annotation/people/stages/{s.stage.pk}/").content.decode()
    assert f"by {newcomer.username}" in page
    assert (
        f'href="/annotation/people/stages/{s.stage.pk}/" data-people-link'
        in client.get(f"/annotation/stages/{s.stage.pk}/").content.decode()
    )

    staying = Enrollment.objects.get(stage=s.stage, user=third)
    api = client.post(
        f"/api/annotation/people/enrollments/{staying.pk}/replace/", {"note": "left"}, content_type="application/json"
    )
    assert api.status_code == 200 and api.json()["status"] == "replaced"
    again = client.post(
        f"/api/annotation/people/enrollments/{staying.pk}/replace/", {}, content_type="application/json"
    )
    assert again.status_code == 400 and "already replaced" in again.json()["detail"]
