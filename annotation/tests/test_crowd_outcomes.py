"""Crowd outcomes: each outcome (completed, screened out, not consented) has its own code and redirect URL; the
researcher's per-participant outcome list (CSV and API) carries the platform ids, status, times, labels and code; a
finished recruit writes nothing more on any page or API route; and nobody can give a crowd participant a password."""

import csv
import io
import re
from decimal import Decimal
from urllib.parse import parse_qs, urlsplit

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse
from rest_framework.pagination import PageNumberPagination

from annotation.models import CrowdLink, CrowdRecruit, Enrollment, Label
from annotation.selectors.crowd_outcomes import OUTCOME_COLUMNS
from annotation.services.crowd import crowd_link_configure
from annotation.services.crowd_outcomes import FINISHED, crowd_may_work, crowd_work_refusal
from annotation.services.labelling import label_next, main_label_submit
from annotation.services.training import guideline_confirm
from annotation.workflow.crowd_status import crowd_status
from edufair_web.accounts.link_only import LINK_ONLY, LinkOnlyRefused
from edufair_web.accounts.people import person_invite_path

from .main_setup import answers, build_main_stage

pytestmark = pytest.mark.django_db

CODES = {"completed": "C0MPLETE", "screened_out": "SCREENED", "not_consented": "NOCONSENT"}
URLS = {
    "completed": "https://app.prolific.com/submissions/complete?x=1",
    "screened_out": "https://app.prolific.com/submissions/complete?x=2",
    "not_consented": "",  # no URL: the code is shown and the participant goes nowhere
}


@pytest.fixture
def crowd():
    s = build_main_stage(items=4, overlap=2)
    s.link = crowd_link_configure(
        stage=s.stage,
        values={
            "max_recruits": 5,
            "items_per_recruit": 2,
            "completion_url": URLS["completed"],
            "completion_code": CODES["completed"],
            "screened_out_url": URLS["screened_out"],
            "screened_out_code": CODES["screened_out"],
            "not_consented_url": URLS["not_consented"],
            "not_consented_code": CODES["not_consented"],
        },
    )
    return s


def enter(link, pid: str, study: str = "study-1", session: str = "sess-1") -> tuple[Client, CrowdRecruit]:
    browser = Client()
    arrived = browser.post(  # "Start the study": the entry's POST signs the participant in
        f"/annotation/crowd/{link.key}/", {"PROLIFIC_PID": pid, "STUDY_ID": study, "SESSION_ID": session}
    )
    assert arrived.status_code == 302
    return browser, CrowdRecruit.objects.get(participant_id=pid)


def complete_quota(s, recruit) -> None:
    enrollment = Enrollment.objects.get(stage=s.stage, user=recruit.user)
    guideline_confirm(enrollment=enrollment)
    Enrollment.objects.filter(pk=enrollment.pk).update(gate_passed=True, status=Enrollment.Status.PASSED)
    for _ in range(s.link.items_per_recruit):
        item = label_next(annotator=recruit.user, stage=s.stage).item
        main_label_submit(annotator=recruit.user, stage=s.stage, item=item, answers=answers(s, "yes"))


def finished_three(crowd):
    """One recruit who completed, one screened out by the gate, one who chose not to consent; and a fourth still
    working. Each finished one has seen their completion page."""
    done, done_recruit = enter(crowd.link, "-2-3", study="study-1", session="sess-a")  # a formula-like platform id
    complete_quota(crowd, done_recruit)
    out, out_recruit = enter(crowd.link, "P-OUT", session="sess-b")
    Enrollment.objects.filter(user=out_recruit.user).update(gate_passed=False, status=Enrollment.Status.FAILED)
    gone, gone_recruit = enter(crowd.link, "P-GONE", session="sess-c")
    working, working_recruit = enter(crowd.link, "P-WORK", session="sess-d")
    pages = {
        "completed": done.get(f"/annotation/crowd/{crowd.link.key}/done/"),
        "screened_out": out.get(f"/annotation/crowd/{crowd.link.key}/done/"),
    }
    left = gone.post(f"/annotation/crowd/{crowd.link.key}/leave/")
    assert left.status_code == 302 and left["Location"] == f"/annotation/crowd/{crowd.link.key}/done/"
    pages["not_consented"] = gone.get(left["Location"])
    browsers = {"completed": done, "screened_out": out, "not_consented": gone, "working": working}
    recruits = {"completed": done_recruit, "screened_out": out_recruit, "not_consented": gone_recruit}
    recruits["working"] = working_recruit
    return browsers, {name: CrowdRecruit.objects.get(pk=r.pk) for name, r in recruits.items()}, pages


def test_each_outcome_shows_its_own_code_and_redirect_url(crowd):
    _, recruits, pages = finished_three(crowd)
    for outcome, page in pages.items():
        assert page.status_code == 200
        body = page.content.decode()
        assert f"data-completion-code>{CODES[outcome]}<" in body
        assert [code for code in CODES.values() if code in body] == [CODES[outcome]]
        assert recruits[outcome].outcome == outcome and recruits[outcome].code == CODES[outcome]
        if URLS[outcome]:
            target = urlsplit(page.context["redirect_url"])
            query = parse_qs(target.query)
            assert (target.netloc, target.path) == ("app.prolific.com", "/submissions/complete")
            assert query["cc"] == [CODES[outcome]] and query["x"] == [URLS[outcome][-1]]
        else:
            assert page.context["redirect_url"] == "" and "http-equiv" not in body
    assert "You chose not to take part" in pages["not_consented"].content.decode()
    assert recruits["working"].outcome == "" and recruits["working"].code == ""


def test_the_leave_button_is_on_a_working_recruits_pages_and_leaving_twice_keeps_the_first_outcome(crowd):
    browser, recruit = enter(crowd.link, "P-LEAVE")
    page = browser.get(f"/annotation/training/{crowd.stage.pk}/").content.decode()
    assert f'action="/annotation/crowd/{crowd.link.key}/leave/"' in page and "I do not consent" in page
    browser.post(f"/annotation/crowd/{crowd.link.key}/leave/")
    moved = browser.get(f"/annotation/training/{crowd.stage.pk}/")
    assert moved["Location"] == f"/annotation/crowd/{crowd.link.key}/done/"
    assert "I do not consent" not in browser.get(moved["Location"]).content.decode()
    crowd_link_configure(stage=crowd.stage, values={"not_consented_code": "CHANGED"})
    browser.post(f"/annotation/crowd/{crowd.link.key}/leave/")
    recruit.refresh_from_db()
    assert (recruit.outcome, recruit.code) == ("not_consented", CODES["not_consented"])  # the code shown stays


def test_a_completed_recruit_who_leaves_keeps_completed(crowd):
    browser, recruit = enter(crowd.link, "P-LATE")
    complete_quota(crowd, recruit)
    browser.post(f"/annotation/crowd/{crowd.link.key}/leave/")
    recruit.refresh_from_db()
    assert (recruit.outcome, recruit.code) == ("completed", CODES["completed"])


def test_the_leave_action_belongs_to_the_recruit(crowd, annotator):
    other = Client()
    other.force_login(annotator)
    assert other.post(f"/annotation/crowd/{crowd.link.key}/leave/").status_code == 403
    assert Client().post(f"/annotation/crowd/{crowd.link.key}/leave/").status_code == 403


PIDS = {"completed": "-2-3", "screened_out": "P-OUT", "not_consented": "P-GONE", "working": "P-WORK"}


def expected_rows(crowd, recruits) -> list[dict]:
    labelled = {"completed": 2, "screened_out": 0, "not_consented": 0, "working": 0}
    rows = []
    for name in ("completed", "screened_out", "not_consented", "working"):
        r = recruits[name]
        end = r.finished_at or r.last_seen_at
        rows.append(
            {
                "pseudonym": r.user.username,
                "participant_id": PIDS[name],
                "study_id": "study-1",
                "session_id": {"completed": "sess-a", "screened_out": "sess-b", "not_consented": "sess-c"}.get(
                    name, "sess-d"
                ),
                "status": name,
                "started_at": r.created_at.isoformat(),
                "finished_at": r.finished_at.isoformat() if r.finished_at else None,
                "seconds_spent": round((end - r.created_at).total_seconds()),
                "main_items_labelled": labelled[name],
                "code": CODES.get(name, ""),
                "pay": "4.50" if name == "completed" else "",
                "pay_currency": "GBP" if name == "completed" else "",
            }
        )
    return rows


def test_the_outcome_list_as_csv_and_api_rows_exact(crowd, researcher):
    CrowdLink.objects.filter(pk=crowd.link.pk).update(pay_amount=Decimal("4.5"), pay_currency="GBP")
    _, recruits, _ = finished_three(crowd)
    expected = expected_rows(crowd, recruits)
    assert [row["participant_id"] for row in expected] == ["-2-3", "P-OUT", "P-GONE", "P-WORK"]
    client = Client()
    client.force_login(researcher)
    api = client.get(f"/api/annotation/people/stages/{crowd.stage.pk}/crowd/outcomes/").json()
    assert api["count"] == 4 and api["next"] is None and api["previous"] is None
    for got, want in zip(api["results"], expected, strict=True):
        assert got.keys() == want.keys()
        for key in ("started_at", "finished_at"):  # DRF writes UTC with a Z
            got[key] = got[key] and got[key].replace("Z", "+00:00")
        assert got == want
    response = client.get(f"/annotation/people/stages/{crowd.stage.pk}/crowd.csv")
    assert response["Content-Disposition"] == f'attachment; filename="stage-{crowd.stage.pk}-crowd.csv"'
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert tuple(rows[0].keys()) == OUTCOME_COLUMNS
    csv_expected = [{key: ("" if value is None else str(value)) for key, value in row.items()} for row in expected]
    csv_expected[0]["participant_id"] = "'-2-3"  # a cell a spreadsheet would run as a formula is neutralised
    assert rows == csv_expected
    page = client.get(f"/annotation/people/stages/{crowd.stage.pk}/").content.decode()
    assert 'data-recruit-status="not_consented"' in page and CODES["not_consented"] in page
    assert "P-GONE" not in page  # the page shows pseudonyms; the platform ids are in the researcher's exports


def test_the_outcome_list_pages_and_is_researchers_only(crowd, researcher, annotator, monkeypatch):
    for n in range(3):
        enter(crowd.link, f"P{n}")
    monkeypatch.setattr(PageNumberPagination, "page_size", 2)  # the installation's pages are 100 long
    client = Client()
    client.force_login(researcher)
    url = f"/api/annotation/people/stages/{crowd.stage.pk}/crowd/outcomes/"
    first = client.get(url).json()
    assert first["count"] == 3 and len(first["results"]) == 2 and first["next"].endswith("?page=2")
    assert [r["participant_id"] for r in client.get(first["next"]).json()["results"]] == ["P2"]
    other = Client()
    other.force_login(annotator)
    assert other.get(url).status_code == 403
    assert client.get("/api/annotation/people/stages/999999/crowd/outcomes/").status_code == 404
    schema = client.get("/api/schema/?format=json").json()
    operation = schema["paths"]["/api/annotation/people/stages/{stage_pk}/crowd/outcomes/"]["get"]
    assert "PaginatedCrowdOutcomeList" in str(operation["responses"]["200"])
    assert "main_items_labelled" in schema["components"]["schemas"]["CrowdOutcome"]["properties"]


def test_the_latest_platform_ids_are_kept_on_the_recruit(crowd):
    enter(crowd.link, "P-BACK", study="study-1", session="sess-1")
    _, recruit = enter(crowd.link, "P-BACK", study="study-2", session="sess-2")
    assert (recruit.study_id, recruit.session_id) == ("study-2", "sess-2")
    assert list(recruit.visits.values_list("session_id", flat=True)) == ["sess-1", "sess-2"]


def test_the_status_is_derived_from_what_is_stored():
    status = crowd_status
    assert status(recorded="", gate_failed=False, main_items_labelled=1, quota=2) == "working"
    assert status(recorded="", gate_failed=False, main_items_labelled=2, quota=2) == "completed"
    assert status(recorded="", gate_failed=True, main_items_labelled=2, quota=2) == "screened_out"
    assert status(recorded="returned", gate_failed=True, main_items_labelled=2, quota=2) == "returned"


# --- the codes per outcome, on every door -----------------------------------------------------------------------

PAGE_FORM = {
    "is_open": "on",
    "max_recruits": "3",
    "items_per_recruit": "2",
    "participant_param": "PROLIFIC_PID",
    "study_param": "STUDY_ID",
    "session_param": "SESSION_ID",
    "completion_url": "https://app.prolific.com/submissions/complete",
    "completion_code": "DONE1",
    "screened_out_url": "https://app.prolific.com/submissions/complete",
    "screened_out_code": "OUT1",
    "not_consented_url": "",
    "not_consented_code": "NOPE1",
}


@pytest.mark.parametrize(
    "bad, words",
    [
        # The forms send every code; the API only the one changed, the others being the link's (C0MPLETE …).
        ({"not_consented_code": "C0MPLETE"}, "must differ from one another"),
        ({"screened_out_code": "NOCONSENT"}, "must differ from one another"),
        ({"not_consented_code": "a b"}, "not_consented_code is 1 to 64"),
        ({"not_consented_url": "ftp://app.prolific.com/x"}, "not_consented_url is an http(s) address"),
        ({"screened_out_url": "ftp://app.prolific.com/x"}, "screened_out_url is an http(s) address"),
    ],
)
def test_page_api_and_admin_refuse_the_same_settings(crowd, researcher, bad, words):
    client = Client()
    client.force_login(researcher)
    before = {field: getattr(crowd.link, field) for field in ("completion_code", "not_consented_code")}
    form = {**PAGE_FORM, "completion_code": "C0MPLETE", "screened_out_code": "SCREENED"}
    form["not_consented_code"] = "NOCONSENT"
    page = client.post(f"/annotation/people/stages/{crowd.stage.pk}/crowd/", {**form, **bad})
    assert page.status_code == 400 and words in page.content.decode()
    api = client.put(f"/api/annotation/people/stages/{crowd.stage.pk}/crowd/", bad, content_type="application/json")
    assert api.status_code == 400 and words in api.json()["detail"]
    admin = client.post(f"/admin/annotation/crowdlink/{crowd.link.pk}/change/", {**form, **bad})
    assert admin.status_code == 200 and words in admin.content.decode()
    crowd.link.refresh_from_db()
    assert {field: getattr(crowd.link, field) for field in before} == before


def test_the_admin_changes_a_links_codes_and_urls(crowd, researcher):
    client = Client()
    client.force_login(researcher)
    saved = client.post(f"/admin/annotation/crowdlink/{crowd.link.pk}/change/", PAGE_FORM)
    assert saved.status_code == 302
    crowd.link.refresh_from_db()
    assert (crowd.link.not_consented_code, crowd.link.screened_out_url) == ("NOPE1", PAGE_FORM["screened_out_url"])


def test_a_new_link_draws_three_different_codes(researcher):
    s = build_main_stage(items=2, overlap=2)
    client = Client()
    client.force_login(researcher)
    form = client.get(f"/annotation/people/stages/{s.stage.pk}/").context["crowd_form"]
    drawn = [form.initial[f] for f in ("completion_code", "screened_out_code", "not_consented_code")]
    assert len(set(drawn)) == 3 and all(re.fullmatch(r"[0-9A-F]{8}", code) for code in drawn)
    body = client.put(f"/api/annotation/people/stages/{s.stage.pk}/crowd/", {}, content_type="application/json").json()
    codes = {body["completion_code"], body["screened_out_code"], body["not_consented_code"]}
    assert len(codes) == 3 and body["not_consented_url"] == ""


# --- a finished recruit writes nothing, through any door ----------------------------------------------------

WRITES = ("post", "put", "patch", "delete")
FORMAT_SUFFIX = re.compile(r"\\\.\(\?P<format>")


def _routes(patterns, prefix=""):
    for entry in patterns:
        if isinstance(entry, URLResolver):
            yield from _routes(entry.url_patterns, prefix + str(entry.pattern))
        elif isinstance(entry, URLPattern):
            yield prefix + str(entry.pattern), entry.callback


def _write_methods(callback) -> list[str]:
    actions = getattr(callback, "actions", None)  # a DRF viewset route: its method → action map
    if actions:
        return [method for method in WRITES if method in actions]
    view = getattr(callback, "view_class", None) or getattr(callback, "cls", None)
    if view is None:
        return []
    return [method for method in WRITES if method in view.http_method_names and hasattr(view, method)]


def _concrete(pattern: str) -> str:
    path = re.sub(r"<(?:id|int):\w+>", "1", pattern)
    path = re.sub(r"<(?:str|slug|path):\w+>", "x", path)
    path = re.sub(r"\(\?P<\w+>[^)]*\)", "1", path)
    return "/" + path.replace("^", "").replace("$", "")


def annotation_writes() -> list[tuple[str, str]]:
    """Every (method, path) of an annotation page or API route that accepts a write, the crowd pages aside."""
    rows = []
    for pattern, callback in _routes(get_resolver().url_patterns):
        if not pattern.startswith(("annotation/", "api/annotation/", "api/^annotation/")):
            continue
        if pattern.startswith("annotation/crowd/") or FORMAT_SUFFIX.search(pattern):
            continue
        rows.extend((method, _concrete(pattern)) for method in _write_methods(callback))
    return rows


WRITE_ROUTES = annotation_writes()


def test_the_write_routes_include_the_labelling_training_and_discussion_doors():
    paths = {path for _, path in WRITE_ROUTES}
    assert len(WRITE_ROUTES) > 80
    assert {
        "/api/annotation/main/1/submit/",
        "/api/annotation/stages/1/labels/",
        "/api/annotation/threads/1/comments/",
        "/api/annotation/main/1/items/1/revise/",
        "/api/annotation/training/1/norming/",
        "/annotation/label/1/",
        "/annotation/training/1/qualification/",
        "/annotation/label/1/items/1/discussion/",
    } <= paths


OUTCOMES = ("completed", "screened_out", "not_consented")
# Each route once, the three outcomes in turn: every outcome meets every kind of door (a route's methods follow one
# another, so they meet different outcomes), at the cost of one sweep.
SWEEP = [(OUTCOMES[n % len(OUTCOMES)], method, path) for n, (method, path) in enumerate(WRITE_ROUTES)]


def finished(crowd, outcome: str) -> tuple[Client, CrowdRecruit]:
    """A recruit who has just finished with `outcome`; no page has recorded it yet but the leave button's."""
    browser, recruit = enter(crowd.link, f"P-{outcome}")
    if outcome == "completed":
        complete_quota(crowd, recruit)
    elif outcome == "screened_out":
        Enrollment.objects.filter(user=recruit.user).update(gate_passed=False, status=Enrollment.Status.FAILED)
    else:
        browser.post(f"/annotation/crowd/{crowd.link.key}/leave/")
    return browser, recruit


def test_the_refusal_names_each_outcomes_code_and_records_it(crowd, annotator):
    for outcome in OUTCOMES:
        _, recruit = finished(crowd, outcome)
        assert crowd_work_refusal(recruit.user) == FINISHED.format(code=CODES[outcome]), outcome
        recruit.refresh_from_db()
        assert (recruit.outcome, recruit.code) == (outcome, CODES[outcome])
    _, working = enter(crowd.link, "P-WORKING")
    assert crowd_work_refusal(working.user) == "" and crowd_may_work(working.user)
    assert crowd_work_refusal(annotator) == "" and crowd_work_refusal(None) == ""


@pytest.mark.parametrize("outcome, method, path", SWEEP, ids=[f"{o} {m.upper()} {p}" for o, m, p in SWEEP])
def test_a_finished_recruit_is_refused_on_every_writing_route(crowd, outcome, method, path):
    browser, _ = finished(crowd, outcome)
    response = getattr(browser, method)(path, {}, content_type="application/json")
    assert response.status_code == 403
    expected = FINISHED.format(code=CODES[outcome])
    if path.startswith("/api/"):
        assert response.json() == {"detail": expected}
    else:
        assert expected in response.content.decode()


def test_labels_are_refused_after_the_quota_on_the_page_and_the_api_and_allowed_before(crowd):
    browser, recruit = enter(crowd.link, "P-QUOTA")
    enrollment = Enrollment.objects.get(stage=crowd.stage, user=recruit.user)
    guideline_confirm(enrollment=enrollment)
    Enrollment.objects.filter(pk=enrollment.pk).update(gate_passed=True, status=Enrollment.Status.PASSED)
    submit = reverse("annotation-main-submit", args=[crowd.stage.pk])
    body = {"answers": {"q1": {"value": "yes"}}}
    for _ in range(2):  # working: the API takes their labels
        item = browser.get(reverse("annotation-main-next", args=[crowd.stage.pk])).json()["item"]["id"]
        assert browser.post(submit, {**body, "item": item}, content_type="application/json").status_code == 201
    labels = Label.objects.count()
    refused = browser.post(submit, {**body, "item": item}, content_type="application/json")
    assert refused.status_code == 403
    assert refused.json()["detail"] == f"You have finished this study; your completion code is {CODES['completed']}."
    next_item = browser.get(reverse("annotation-main-next", args=[crowd.stage.pk]))
    assert next_item.status_code == 403 and CODES["completed"] in next_item.json()["detail"]  # no place held
    page = browser.post(f"/annotation/label/{crowd.stage.pk}/", {"item": item, "answer-q1": "yes"})
    assert page.status_code == 403 and CODES["completed"] in page.content.decode()
    assert Label.objects.count() == labels
    recruit.refresh_from_db()
    assert (recruit.outcome, recruit.code) == ("completed", CODES["completed"])  # recorded by the refusal
    assert browser.post("/accounts/logout/").status_code == 302  # logging out stays open


# --- nobody gives a crowd participant a password -------------------------------------------------------------


@pytest.fixture
def recruit_user(crowd):
    return enter(crowd.link, "P-PASS")[1].user


def test_the_people_page_and_api_refuse_to_invite_a_crowd_participant(recruit_user, researcher, make_user):
    for who in (researcher, make_user("operator")):
        client = Client()
        client.force_login(who)
        page = client.get("/annotation/people/", {"q": recruit_user.username})
        assert [row["invitable"] for row in page.context["rows"]] == [False]
        posted = client.post(f"/annotation/people/{recruit_user.pk}/invite/", follow=True)
        text = posted.content.decode()
        assert LINK_ONLY in text and "/people/welcome/" not in text
        api = client.post(f"/api/annotation/people/{recruit_user.pk}/invite/")
        assert api.status_code == 400 and LINK_ONLY in api.json()["detail"]


def test_an_invitation_link_made_before_is_refused(recruit_user, researcher, monkeypatch):
    from edufair_web.accounts import people

    monkeypatch.setattr(people, "_invite_check", lambda **kwargs: None)  # as the code did before the refusal
    path = person_invite_path(by=researcher, user=recruit_user)
    monkeypatch.undo()
    uid, token = path.rstrip("/").split("/")[-2:]
    api = Client().post(
        f"/api/annotation/people/welcome/{uid}/{token}/", {"password": "A-long-pass-1"}, content_type="application/json"
    )
    assert api.status_code == 400 and LINK_ONLY in api.json()["detail"]
    browser = Client()
    page = browser.get(path, follow=True)  # Django's page moves the token into the session first
    assert f"This invitation cannot be used: {LINK_ONLY}." in page.content.decode()
    assert "data-set-password" not in page.content.decode()
    form = {"new_password1": "A-long-pass-1", "new_password2": "A-long-pass-1"}
    posted = browser.post(page.request["PATH_INFO"], form)
    assert posted.status_code == 200 and LINK_ONLY in posted.content.decode()
    recruit_user.refresh_from_db()
    assert not recruit_user.has_usable_password()


def test_the_admin_password_page_refuses_a_crowd_participant(recruit_user, make_user):
    client = Client()
    client.force_login(make_user("operator"))
    url = f"/admin/auth/user/{recruit_user.pk}/password/"
    shown = client.get(url, follow=True)
    assert shown.redirect_chain[0] == (f"/admin/auth/user/{recruit_user.pk}/change/", 302)
    assert LINK_ONLY in shown.content.decode()
    posted = client.post(url, {"password1": "A-long-pass-1", "password2": "A-long-pass-1", "usable_password": "true"})
    assert posted.status_code == 302
    recruit_user.refresh_from_db()
    assert not recruit_user.has_usable_password()
    other = make_user("annotator")
    assert client.get(f"/admin/auth/user/{other.pk}/password/").status_code == 200  # others' pages still work


def test_commands_and_code_cannot_set_a_crowd_participants_password(recruit_user):
    with pytest.raises(CommandError, match=LINK_ONLY):
        call_command("create_user", recruit_user.username, "--role", "annotator", "--password", "A-long-pass-1")
    user = User.objects.get(pk=recruit_user.pk)
    user.set_password("A-long-pass-1")
    with pytest.raises(LinkOnlyRefused, match=LINK_ONLY):
        user.save()  # what manage.py changepassword does
    assert not User.objects.get(pk=recruit_user.pk).has_usable_password()
    user.refresh_from_db()
    user.is_active = False
    user.save()  # other fields still save
