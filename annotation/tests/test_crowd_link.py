"""Crowd entry links: the same participant id always resumes the same pseudonymous annotator (stored as a keyed
hash, the raw ids only in the researcher-only export); the link is bounded, closable and throttled; a recruit who
finishes their quota or fails the gate is sent to the completion page with the matching code."""

from urllib.parse import parse_qs, urlsplit

import pytest
from django.contrib.auth.models import User
from django.test import Client

from annotation.models import CrowdRecruit, CrowdVisit, Enrollment
from annotation.services.crowd import crowd_link_configure, participant_hash
from annotation.services.labelling import label_next, main_label_submit
from annotation.services.training import guideline_confirm

from .main_setup import answers, build_main_stage

pytestmark = pytest.mark.django_db

PID = "5f3c0a9b8d7e6f5a4b3c2d1e"


@pytest.fixture
def crowd():
    s = build_main_stage(items=4, overlap=2)
    s.link = crowd_link_configure(
        stage=s.stage,
        values={
            "max_recruits": 2,
            "items_per_recruit": 2,
            "completion_url": "https://app.prolific.com/submissions/complete?x=1",
            "completion_code": "C0MPLETE",
            "screened_out_url": "https://app.prolific.com/submissions/complete?x=2",
            "screened_out_code": "SCREENED",
            "not_consented_url": "https://app.prolific.com/submissions/complete?x=3",
            "not_consented_code": "NOCONSENT",
        },
    )
    return s


def enter(client: Client, link, pid: str = PID, study: str = "study-1", session: str = "sess-1"):
    """Press "Start the study" (the entry's POST: its GET signs nobody in)."""
    return client.post(
        f"/annotation/crowd/{link.key}/", {"PROLIFIC_PID": pid, "STUDY_ID": study, "SESSION_ID": session}
    )


def test_the_same_participant_resumes_the_same_pseudonymous_annotator(crowd):
    first = enter(Client(), crowd.link)
    assert first.status_code == 302 and first["Location"] == f"/annotation/training/{crowd.stage.pk}/"
    recruit = CrowdRecruit.objects.get()
    assert recruit.user.username.startswith("crowd-") and PID not in recruit.user.username
    assert not recruit.user.has_usable_password()
    assert recruit.participant_hash == participant_hash(link=crowd.link, participant_id=PID) != PID
    assert Enrollment.objects.filter(stage=crowd.stage, user=recruit.user).exists()

    browser = Client()  # another device, another session: the same annotator
    enter(browser, crowd.link, session="sess-2")
    assert CrowdRecruit.objects.count() == 1 and User.objects.filter(username__startswith="crowd-").count() == 1
    assert browser.get("/api/me/").json()["username"] == recruit.user.username
    assert list(CrowdVisit.objects.values_list("session_id", flat=True)) == ["sess-1", "sess-2"]


def test_the_parameter_names_are_the_stages(crowd):
    crowd_link_configure(
        stage=crowd.stage, values={"participant_param": "workerId", "study_param": "hitId", "session_param": "aid"}
    )
    assert enter(Client(), crowd.link).status_code == 403  # PROLIFIC_PID is no longer read
    response = Client().post(f"/annotation/crowd/{crowd.link.key}/", {"workerId": "W1", "hitId": "H1", "aid": "A1"})
    assert response.status_code == 302
    assert CrowdVisit.objects.get().participant_id == "W1"


@pytest.mark.parametrize("pid", ["", "has space", "x" * 129, "quote'd"])
def test_a_missing_or_malformed_participant_id_is_refused(crowd, pid):
    response = enter(Client(), crowd.link, pid=pid)
    assert response.status_code == 403
    assert "PROLIFIC_PID" in response.content.decode()
    assert not CrowdRecruit.objects.exists()


def test_the_link_takes_at_most_max_recruits_and_the_others_still_resume(crowd):
    for pid in ("p1", "p2"):
        assert enter(Client(), crowd.link, pid=pid).status_code == 302
    full = enter(Client(), crowd.link, pid="p3")
    assert full.status_code == 403 and "all the participants it needs" in full.content.decode()
    assert enter(Client(), crowd.link, pid="p1").status_code == 302
    assert CrowdRecruit.objects.count() == 2


def test_a_closed_link_takes_nobody_new(crowd):
    enter(Client(), crowd.link, pid="early")
    crowd_link_configure(stage=crowd.stage, values={"is_open": False})
    closed = enter(Client(), crowd.link, pid="late")
    assert closed.status_code == 403 and "closed" in closed.content.decode()
    assert enter(Client(), crowd.link, pid="early").status_code == 302  # who is in may finish
    assert CrowdRecruit.objects.count() == 1


def test_arrivals_are_throttled_per_address(crowd, settings):
    settings.THROTTLE_RATES = {**settings.THROTTLE_RATES, "crowd_entry": "2/minute"}
    statuses = [enter(Client(), crowd.link, pid=f"t{n}").status_code for n in range(3)]
    assert statuses == [302, 302, 429]
    assert CrowdRecruit.objects.count() == 2


def test_an_unknown_key_is_404(crowd):
    assert Client().get("/annotation/crowd/not-the-key/", {"PROLIFIC_PID": PID}).status_code == 404


def pass_gate_as_recruit(recruit, stage):
    enrollment = Enrollment.objects.get(stage=stage, user=recruit.user)
    guideline_confirm(enrollment=enrollment)
    Enrollment.objects.filter(pk=enrollment.pk).update(gate_passed=True, status=Enrollment.Status.PASSED)


def test_the_quota_done_every_page_leads_to_the_completion_code_and_the_platform(crowd):
    browser = Client()
    enter(browser, crowd.link)
    recruit = CrowdRecruit.objects.get()
    assert browser.get(f"/annotation/crowd/{crowd.link.key}/done/").status_code == 302  # not finished yet
    pass_gate_as_recruit(recruit, crowd.stage)
    for _ in range(2):
        item = label_next(annotator=recruit.user, stage=crowd.stage).item
        main_label_submit(annotator=recruit.user, stage=crowd.stage, item=item, answers=answers(crowd, "yes"))
    moved = browser.get(f"/annotation/label/{crowd.stage.pk}/")
    assert moved.status_code == 302 and moved["Location"] == f"/annotation/crowd/{crowd.link.key}/done/"
    done = browser.get(moved["Location"])
    body = done.content.decode()
    assert "data-completion-code>C0MPLETE<" in body
    target = urlsplit(done.context["redirect_url"])
    assert (target.netloc, parse_qs(target.query)) == ("app.prolific.com", {"x": ["1"], "cc": ["C0MPLETE"]})
    assert f'content="3;url={done.context["redirect_url"]}"' in body.replace("&amp;", "&")
    recruit.refresh_from_db()
    assert recruit.outcome == "completed" and recruit.finished_at is not None
    resumed = enter(Client(), crowd.link)  # a later visit goes straight to the code
    assert resumed["Location"] == f"/annotation/crowd/{crowd.link.key}/done/"


def test_failing_the_gate_shows_the_screened_out_code(crowd):
    browser = Client()
    enter(browser, crowd.link)
    recruit = CrowdRecruit.objects.get()
    Enrollment.objects.filter(user=recruit.user).update(gate_passed=False, status=Enrollment.Status.FAILED)
    moved = browser.get(f"/annotation/training/{crowd.stage.pk}/")
    done = browser.get(moved["Location"])
    assert "SCREENED" in done.content.decode() and "C0MPLETE" not in done.content.decode()
    assert parse_qs(urlsplit(done.context["redirect_url"]).query)["cc"] == ["SCREENED"]


def test_the_completion_page_belongs_to_the_recruit(crowd, make_user):
    other = Client()
    other.force_login(make_user("annotator"))
    assert other.get(f"/annotation/crowd/{crowd.link.key}/done/").status_code == 403


def test_researchers_see_pseudonyms_and_only_the_export_has_platform_ids(crowd, researcher, make_user):
    enter(Client(), crowd.link)
    pseudonym = CrowdRecruit.objects.get().user.username
    client = Client()
    client.force_login(researcher)
    page = client.get(f"/annotation/people/stages/{crowd.stage.pk}/").content.decode()
    assert pseudonym in page and PID not in page
    recruits = client.get(f"/api/annotation/people/stages/{crowd.stage.pk}/crowd/recruits/").json()
    assert [r["pseudonym"] for r in recruits] == [pseudonym] and PID not in str(recruits)
    export = client.get(f"/api/annotation/people/stages/{crowd.stage.pk}/crowd/export/").json()
    assert export[0]["participant_id"] == PID and export[0]["pseudonym"] == pseudonym
    csv_text = client.get(f"/annotation/people/stages/{crowd.stage.pk}/crowd.csv").content.decode()
    assert f"{pseudonym},{PID},study-1,sess-1" in csv_text
    # The Appendix-D report lists the recruits by pseudonym, in every format, never their platform id.
    from annotation.reports import project_report, render

    report = project_report(crowd.stage.project)
    assert [r["pseudonym"] for r in report["crowd"][0]["recruits"]] == [pseudonym]
    for fmt in ("md", "html", "json"):
        body = render(report, fmt)[0]
        assert pseudonym in body and PID not in body, fmt
    annotator = Client()
    annotator.force_login(make_user("annotator"))
    assert annotator.get(f"/api/annotation/people/stages/{crowd.stage.pk}/crowd/export/").status_code == 403
    assert annotator.get(f"/annotation/people/stages/{crowd.stage.pk}/crowd.csv").status_code == 403


def test_the_api_opens_configures_and_closes_a_link(researcher):
    s = build_main_stage(items=2, overlap=2)
    client = Client()
    client.force_login(researcher)
    url = f"/api/annotation/people/stages/{s.stage.pk}/crowd/"
    assert client.get(url).status_code == 404
    opened = client.put(url, {"max_recruits": 5}, content_type="application/json")
    assert opened.status_code == 200
    body = opened.json()
    assert body["is_open"] is True and body["max_recruits"] == 5 and body["participant_param"] == "PROLIFIC_PID"
    assert body["completion_code"] != body["screened_out_code"]
    assert body["entry_url"].startswith("http://testserver/annotation/crowd/")
    closed = client.put(url, {"is_open": False}, content_type="application/json")
    assert closed.json()["is_open"] is False and closed.json()["entry_url"] == body["entry_url"]


@pytest.mark.parametrize(
    "bad",
    [
        {"max_recruits": 0},
        {"max_recruits": "ten"},
        {"items_per_recruit": True},
        {"is_open": "yes"},
        {"participant_param": "has space"},
        {"participant_param": "same", "study_param": "same"},
        {"completion_url": "javascript:alert(1)"},
        {"completion_code": "a b"},
        {"completion_code": "X", "screened_out_code": "X"},
    ],
)
def test_bad_settings_are_400s_naming_the_field(researcher, bad):
    s = build_main_stage(items=2, overlap=2)
    client = Client()
    client.force_login(researcher)
    response = client.put(f"/api/annotation/people/stages/{s.stage.pk}/crowd/", bad, content_type="application/json")
    assert response.status_code == 400
    assert response.json()["detail"]
    assert (
        client.put(
            f"/api/annotation/people/stages/{s.stage.pk}/crowd/", [1], content_type="application/json"
        ).status_code
        == 400
    )


def test_the_page_opens_the_link(researcher):
    s = build_main_stage(items=2, overlap=2)
    client = Client()
    client.force_login(researcher)
    form = {
        "is_open": "on",
        "max_recruits": "3",
        "items_per_recruit": "2",
        "participant_param": "PROLIFIC_PID",
        "study_param": "STUDY_ID",
        "session_param": "SESSION_ID",
        "completion_url": "https://app.prolific.com/submissions/complete",
        "completion_code": "DONE1",
        "screened_out_code": "OUT1",
        "not_consented_code": "NOPE1",
    }
    assert client.post(f"/annotation/people/stages/{s.stage.pk}/crowd/", form).status_code == 302
    page = client.get(f"/annotation/people/stages/{s.stage.pk}/").content.decode()
    assert "?PROLIFIC_PID={{%PROLIFIC_PID%}}&amp;STUDY_ID={{%STUDY_ID%}}&amp;SESSION_ID={{%SESSION_ID%}}" in page
    bad = client.post(f"/annotation/people/stages/{s.stage.pk}/crowd/", {**form, "screened_out_code": "DONE1"})
    assert bad.status_code == 400 and "must differ" in bad.content.decode()
