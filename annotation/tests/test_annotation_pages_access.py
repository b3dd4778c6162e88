"""Every annotation page answers its role and refuses the others; the home page and the navigation point
annotators to their next training step and researchers to their projects."""

import pytest
from django.test import Client
from django.urls import reverse

from .training_setup import build_stage, enrol

pytestmark = pytest.mark.django_db


def client_for(make_user, role):
    client = Client()
    client.force_login(make_user(role))
    return client


def test_researcher_pages(make_user):
    s = build_stage()
    researcher = client_for(make_user, "researcher")
    annotator = client_for(make_user, "annotator")
    adjudicator = client_for(make_user, "adjudicator")
    urls = [
        reverse("annotation:projects"),
        reverse("annotation:project-create"),
        reverse("annotation:project", args=[s.project.pk]),
        reverse("annotation:stage", args=[s.stage.pk]),
    ]
    for url in urls:
        assert researcher.get(url).status_code == 200, url
        assert annotator.get(url).status_code == 403, url
        assert adjudicator.get(url).status_code == 403, url
    assert Client().get(urls[0]).status_code == 302  # anonymous → login
    assert adjudicator.get(reverse("annotation:moderation")).status_code == 200
    assert annotator.get(reverse("annotation:moderation")).status_code == 403


def test_stage_page_shows_progress_and_scores(make_user):
    from .training_setup import walk_to_decision

    s = build_stage(pilot=2)
    walk_to_decision(s, make_user("annotator"))
    researcher = client_for(make_user, "researcher")
    page = researcher.get(reverse("annotation:stage", args=[s.stage.pk])).content.decode()
    assert "Passed: you can label real items" in page
    assert "10/10" in page


def test_annotator_home_and_training_list(make_user):
    s = build_stage()
    user = make_user("annotator")
    enrol(s, user)
    client = Client()
    client.force_login(user)
    home = client.get(reverse("home")).content.decode()
    assert "Domain validity: Read and confirm the guideline" in home
    assert reverse("annotation:my-training") in home
    listing = client.get(reverse("annotation:my-training")).content.decode()
    assert reverse("annotation:training-guideline", args=[s.stage.pk]) in listing


def test_guideline_markdown_is_rendered_without_raw_html(make_user):
    from annotation.services.training import guideline_publish

    s = build_stage()
    guideline_publish(stage=s.stage, text="# Title\n\n<script>alert(1)</script>\n\n**bold**")
    user = make_user("annotator")
    enrol(s, user)
    client = Client()
    client.force_login(user)
    page = client.get(reverse("annotation:training-guideline", args=[s.stage.pk])).content.decode()
    assert "<strong>bold</strong>" in page and "<h1>Title</h1>" in page
    assert "<script>alert(1)</script>" not in page
