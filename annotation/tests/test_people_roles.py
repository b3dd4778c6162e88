"""Role checks on every write of the people and crowd pages and API: annotators and adjudicators are refused
everywhere; operators manage people but take no part in the research (enrolment, replacements, crowd links);
anonymous callers are sent to log in (pages) or get 401 (API). Nothing is written by a refused call."""

import pytest
from django.contrib.auth.models import User
from django.test import Client

from annotation.models import CrowdLink, Enrollment
from annotation.services.enrollment import enrollment_create

from .main_setup import build_main_stage

pytestmark = pytest.mark.django_db

# (method, path template, JSON body or form, "people" for researchers and operators, "research" for researchers)
WRITES = [
    ("post", "/api/annotation/people/", {"username": "made-by-{role}", "role": "annotator"}, "people"),
    ("post", "/api/annotation/people/{target}/invite/", None, "people"),
    ("post", "/api/annotation/people/{target}/deactivate/", None, "people"),
    ("post", "/api/annotation/people/stages/{stage}/enrol/", {"usernames": ["{target_name}"]}, "research"),
    ("post", "/api/annotation/people/enrollments/{enrollment}/replace/", {}, "research"),
    ("put", "/api/annotation/people/stages/{stage}/crowd/", {"max_recruits": 3}, "research"),
    ("post", "/annotation/people/", {"username": "made-by-{role}", "role": "annotator"}, "people"),
    ("post", "/annotation/people/{target}/invite/", {}, "people"),
    ("post", "/annotation/people/{target}/deactivate/", {}, "people"),
    ("post", "/annotation/people/stages/{stage}/", {"usernames": "{target_name}"}, "research"),
    ("post", "/annotation/people/enrollments/{enrollment}/replace/", {}, "research"),
    ("post", "/annotation/people/stages/{stage}/crowd/", {"max_recruits": "3"}, "research"),
]
ALLOWED = {"people": {"researcher", "operator"}, "research": {"researcher"}}


def fill(value, names):
    if isinstance(value, str):
        return value.format(**names)
    if isinstance(value, list):
        return [fill(v, names) for v in value]
    if isinstance(value, dict):
        return {k: fill(v, names) for k, v in value.items()}
    return value


@pytest.mark.parametrize("role", ["anonymous", "annotator", "adjudicator", "operator"])
def test_refused_roles_change_nothing(make_user, role):
    s = build_main_stage(items=2, overlap=2)
    target = make_user("annotator")
    other = make_user("annotator")
    enrollment = enrollment_create(stage=s.stage, user=other)
    client = Client()
    if role != "anonymous":
        client.force_login(make_user(role))
    names = {"role": role, "target": target.pk, "target_name": target.username, "stage": s.stage.pk}
    names["enrollment"] = enrollment.pk
    for method, template, body, kind in WRITES:
        if role in ALLOWED[kind]:
            continue
        path = template.format(**names)
        data = fill(body, names)
        if path.startswith("/api/"):
            response = getattr(client, method)(path, data, content_type="application/json")
            expected = 401 if role == "anonymous" else 403
        else:
            response = getattr(client, method)(path, data or {})
            expected = 302 if role == "anonymous" else 403
        assert response.status_code == expected, f"{role} {method.upper()} {path}: {response.status_code}"
    target.refresh_from_db()
    assert target.is_active
    assert not User.objects.filter(username__startswith="made-by-").exists()
    assert not Enrollment.objects.filter(user=target).exists()
    assert Enrollment.objects.get(pk=enrollment.pk).status == Enrollment.Status.TRAINING
    assert not CrowdLink.objects.exists()
