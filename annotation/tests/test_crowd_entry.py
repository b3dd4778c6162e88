"""Crowd entries that survive a real crowd: signed or approved entries only (made-up ids create nothing), a start page
whose GET signs nobody in and whose POST replaces a signed-in session only when confirmed, arrivals counted in the
database, places held only while a recruit works (idle or returned recruits give items and places back), and one
browser or address behind several ids never filling two slots of one item."""

from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.core.cache import cache
from django.test import Client
from django.utils import timezone

from annotation.models import Assignment, CrowdApprovedParticipant, CrowdRecruit, CrowdVisit, Enrollment, MainItem
from annotation.selectors.crowd_outcomes import crowd_outcome_rows
from annotation.services.crowd_entry_settings import crowd_link_save
from annotation.services.labelling import label_next, stage_labelling_configure
from annotation.services.training import guideline_confirm
from annotation.workflow.crowd_signature import entry_signature

from .main_setup import answers, build_main_stage

pytestmark = pytest.mark.django_db

SECRET_STUDY = "study-1"


@pytest.fixture
def stage():
    return build_main_stage(items=4, overlap=2)


def make_link(stage, **values):
    settings = {"max_recruits": 5, "items_per_recruit": 2, **values}
    return crowd_link_save(stage=stage.stage, values=settings)


def url(link) -> str:
    return f"/annotation/crowd/{link.key}/"


def ids(pid, study=SECRET_STUDY, session="sess-1", sig=None) -> dict:
    params = {"PROLIFIC_PID": pid, "STUDY_ID": study, "SESSION_ID": session}
    if sig is not None:
        params["sig"] = sig
    return params


def start(client, link, pid, address="10.0.0.1", **kw):
    return client.post(url(link), ids(pid, **kw), REMOTE_ADDR=address)


def signed(link, pid, study=SECRET_STUDY) -> str:
    return entry_signature(secret=link.entry_secret, participant_id=pid, study_id=study)


def nothing_created(users_before: int) -> bool:
    return (
        User.objects.count() == users_before
        and not CrowdRecruit.objects.exists()
        and not CrowdVisit.objects.exists()
        and not Enrollment.objects.exists()
    )


def signed_in_username(client) -> str | None:
    response = client.get("/api/me/")
    return response.json()["username"] if response.status_code == 200 else None


def pass_gate(recruit, stage):
    enrollment = Enrollment.objects.get(stage=stage.stage, user=recruit.user)
    guideline_confirm(enrollment=enrollment)
    Enrollment.objects.filter(pk=enrollment.pk).update(gate_passed=True, status=Enrollment.Status.PASSED)


# --- Entries that cannot be forged --------------------------------------------------------------------------------


def test_made_up_ids_against_a_signed_link_are_refused_and_create_nothing(stage):
    link = make_link(stage, signature_required=True)
    users = User.objects.count()
    for n in range(12):
        pid = f"madeup{n:02d}"
        forged = None if n % 3 == 0 else ("0" * 64 if n % 3 == 1 else signed(link, f"other{n}"))
        page = Client().get(url(link), ids(pid, sig=forged))
        assert page.status_code == 403 and "not signed for your participant id" in page.content.decode()
        pressed = start(Client(), link, pid, address=f"10.0.1.{n}", sig=forged)
        assert pressed.status_code == 403 and "not signed for your participant id" in pressed.content.decode()
    assert nothing_created(users)

    browser = Client()
    pid = "5f3c0a9b8d7e6f5a4b3c2d1e"
    page = browser.get(url(link), ids(pid, sig=signed(link, pid)))
    assert page.status_code == 200 and "Start the study" in page.content.decode()
    assert start(browser, link, pid, sig=signed(link, pid)).status_code == 302
    assert CrowdRecruit.objects.count() == 1
    # The signature binds the study too: the same id signed for another study does not enter.
    wrong_study = start(Client(), link, "someone", sig=signed(link, "someone", study="study-2"))
    assert wrong_study.status_code == 403 and CrowdRecruit.objects.count() == 1


def test_a_new_secret_stops_the_old_signatures(stage):
    link = make_link(stage, signature_required=True)
    old = signed(link, "p1")
    link = crowd_link_save(stage=stage.stage, values={"rotate_secret": True})
    assert start(Client(), link, "p1", sig=old).status_code == 403
    assert start(Client(), link, "p1", sig=signed(link, "p1")).status_code == 302


def test_the_approved_list_lets_only_its_ids_in(stage):
    export = (
        "Submission id,Participant id,Status\n"
        "sub1,5f3c0a9b8d7e6f5a4b3c2d1e,APPROVED\n"
        "sub2,60a1b2c3d4e5f60718293a4b,AWAITING REVIEW\n"
    )
    link = make_link(stage, approved_only=True, approved_participants=export)
    assert CrowdApprovedParticipant.objects.filter(link=link).count() == 2
    assert "5f3c0a9b8d7e6f5a4b3c2d1e" not in str(list(CrowdApprovedParticipant.objects.values()))  # hashes only
    users = User.objects.count()
    for n in range(3):
        refused = start(Client(), link, f"notlisted{n}", address=f"10.0.2.{n}")
        assert refused.status_code == 403 and "list of approved participants" in refused.content.decode()
    assert nothing_created(users)
    assert start(Client(), link, "60a1b2c3d4e5f60718293a4b").status_code == 302
    assert CrowdRecruit.objects.count() == 1


def test_both_a_signature_and_the_list_when_both_are_required(stage):
    link = make_link(stage, signature_required=True, approved_only=True, approved_participants="p1\np2\n")
    assert start(Client(), link, "p1").status_code == 403  # listed, unsigned
    assert start(Client(), link, "p3", sig=signed(link, "p3")).status_code == 403  # signed, unlisted
    assert start(Client(), link, "p2", sig=signed(link, "p2")).status_code == 302


def test_the_page_uploads_the_list_and_says_what_the_link_trusts(stage, researcher):
    client = Client()
    client.force_login(researcher)
    page_url = f"/annotation/people/stages/{stage.stage.pk}/"
    form = {
        "is_open": "on",
        "max_recruits": "3",
        "items_per_recruit": "2",
        "participant_param": "PROLIFIC_PID",
        "study_param": "STUDY_ID",
        "session_param": "SESSION_ID",
        "completion_code": "DONE1",
        "screened_out_code": "OUT1",
        "not_consented_code": "NOPE1",
    }
    assert client.post(f"{page_url}crowd/", form).status_code == 302
    page = client.get(page_url).content.decode()
    assert "Anyone who knows a participant id can enter as that participant" in page

    from django.core.files.uploadedfile import SimpleUploadedFile

    upload = SimpleUploadedFile("export.csv", b"Participant id,Status\nabc123,APPROVED\n", content_type="text/csv")
    saved = client.post(f"{page_url}crowd/", {**form, "approved_only": "on", "approved_file": upload})
    assert saved.status_code == 302
    page = client.get(page_url).content.decode()
    assert "Only participant ids on the approved list can enter." in page and "Approved list: 1 participant id" in page
    link = stage.stage.crowd_link
    assert start(Client(), link, "abc123").status_code == 302

    bad = client.post(f"{page_url}crowd/", {**form, "approved_participants": "good1\nhas space\n"})
    assert bad.status_code == 400 and "Line 2" in bad.content.decode()
    signing = client.post(f"{page_url}crowd/", {**form, "signature_required": "on"})
    assert signing.status_code == 302
    page = client.get(page_url).content.decode()
    link.refresh_from_db()
    assert link.entry_secret in page and "HMAC-SHA256" in page and "arrivals signed with this link" in page


def test_the_api_sets_the_same_rule_and_its_recipe_signs(stage, researcher):
    client = Client()
    client.force_login(researcher)
    api = f"/api/annotation/people/stages/{stage.stage.pk}/crowd/"
    plain = client.put(api, {"max_recruits": 3}, content_type="application/json").json()
    assert plain["trusts"].startswith("Anyone who knows a participant id can enter as that participant")
    assert plain["signature_required"] is False and plain["reservation_minutes"] == 30
    body = client.put(api, {"signature_required": True, "signature_param": "token"}, content_type="application/json")
    link = body.json()
    assert link["signature_required"] is True and len(link["entry_secret"]) == 64
    # The one-liner on the page and in the API really signs an entry.
    scope = {"PROLIFIC_PID": "p9", "STUDY_ID": SECRET_STUDY}
    exec(link["signing_recipe"], scope)  # noqa: S102 — the recipe shown to researchers, run as they would
    assert scope["token"] == entry_signature(secret=link["entry_secret"], participant_id="p9", study_id=SECRET_STUDY)
    entered = Client().post(url(stage.stage.crowd_link), {**ids("p9"), "token": scope["token"]})
    assert entered.status_code == 302
    listed = client.put(
        api, {"approved_only": True, "approved_participants": ["p1", "p2"]}, content_type="application/json"
    )
    assert listed.json()["approved_count"] == 2 and listed.json()["trusts"].startswith("Only participant ids on the")
    for bad in (
        {"approved_only": True, "approved_participants": ""},
        {"approved_participants": ["p1", 7]},
        {"signature_param": "PROLIFIC_PID"},
        {"reservation_minutes": 0},
        {"approved_participants": "a,b\n1,2\n"},
    ):
        refused = client.put(api, bad, content_type="application/json")
        assert refused.status_code == 400 and refused.json()["detail"], bad


# --- One click before a session is replaced -----------------------------------------------------------------------


def test_the_get_signs_nobody_in_and_the_post_does(stage):
    link = make_link(stage)
    browser = Client()
    page = browser.get(url(link), ids("p1"))
    assert page.status_code == 200 and "data-crowd-start-button" in page.content.decode()
    assert signed_in_username(browser) is None and not CrowdRecruit.objects.exists()
    assert start(browser, link, "p1").status_code == 302
    assert signed_in_username(browser) == CrowdRecruit.objects.get().user.username


def test_the_post_needs_its_csrf_token(stage):
    link = make_link(stage)
    browser = Client(enforce_csrf_checks=True)
    assert browser.post(url(link), ids("p1")).status_code == 403
    assert not CrowdRecruit.objects.exists()
    page = browser.get(url(link), ids("p1"))
    token = page.context["csrf_token"]
    assert browser.post(url(link), {**ids("p1"), "csrfmiddlewaretoken": str(token)}).status_code == 302


def test_a_signed_in_researcher_is_replaced_only_when_they_confirm(stage, researcher):
    link = make_link(stage)
    browser = Client()
    browser.force_login(researcher)
    page = browser.get(url(link), ids("p1")).content.decode()
    assert f"signed in as {researcher.username}" in page and f"Sign out of {researcher.username}" in page
    assert signed_in_username(browser) == researcher.username
    unconfirmed = start(browser, link, "p1")
    assert unconfirmed.status_code == 200 and f"signed in as {researcher.username}" in unconfirmed.content.decode()
    assert signed_in_username(browser) == researcher.username and not CrowdRecruit.objects.exists()
    confirmed = browser.post(url(link), {**ids("p1"), "replace_session": "1"}, REMOTE_ADDR="10.0.0.1")
    assert confirmed.status_code == 302
    assert signed_in_username(browser) == CrowdRecruit.objects.get().user.username


def test_the_post_checks_the_signature_again(stage):
    link = make_link(stage, signature_required=True)
    browser = Client()
    assert browser.get(url(link), ids("p1", sig=signed(link, "p1"))).status_code == 200
    # The form's values are the ones checked: a changed id with the first one's signature is refused.
    assert start(browser, link, "p2", sig=signed(link, "p1")).status_code == 403
    assert not CrowdRecruit.objects.exists()


# --- Arrivals counted in the database -----------------------------------------------------------------------------


def test_arrivals_per_address_are_counted_in_the_database(stage, settings):
    settings.THROTTLE_RATES = {**settings.THROTTLE_RATES, "crowd_entry": "2/minute"}
    link = make_link(stage)
    assert [start(Client(), link, f"a{n}", address="10.9.9.9").status_code for n in range(2)] == [302, 302]
    cache.clear()  # what a second web process sees: its own empty cache, the same database
    refused = start(Client(), link, "a2", address="10.9.9.9")
    assert refused.status_code == 429 and 1 <= int(refused["Retry-After"]) <= 60
    assert f"try again in {refused['Retry-After']} second" in refused.content.decode()
    assert CrowdRecruit.objects.count() == 2
    assert start(Client(), link, "a3", address="10.9.9.8").status_code == 302  # another address
    CrowdVisit.objects.update(at=timezone.now() - timedelta(seconds=61))
    assert start(Client(), link, "a2", address="10.9.9.9").status_code == 302


def test_new_recruits_per_link_are_counted_in_the_database(stage, settings):
    settings.THROTTLE_RATES = {**settings.THROTTLE_RATES, "crowd_link": "3/minute"}
    link = make_link(stage)
    assert [start(Client(), link, f"n{n}", address=f"10.3.0.{n}").status_code for n in range(3)] == [302] * 3
    refused = start(Client(), link, "n3", address="10.3.0.9")
    assert refused.status_code == 429 and "Many participants are arriving at once" in refused.content.decode()
    assert start(Client(), link, "n0", address="10.3.0.0").status_code == 302  # who is in may come back


# --- Places held only while a recruit works -----------------------------------------------------------------------


def test_a_flood_fills_the_places_then_idle_places_come_back(stage):
    link = make_link(stage, max_recruits=5, reservation_minutes=30)
    flood = [start(Client(), link, f"fake{n}", address=f"10.4.0.{n}").status_code for n in range(5)]
    assert flood == [302] * 5
    full = start(Client(), link, "real-participant", address="10.4.1.1")
    assert full.status_code == 403 and "all the participants it needs right now" in full.content.decode()
    assert "come back after 30 minutes" in full.content.decode()
    # 31 minutes later none of the made-up recruits has opened a page: their places come back.
    CrowdRecruit.objects.update(last_seen_at=timezone.now() - timedelta(minutes=31))
    assert start(Client(), link, "real-participant", address="10.4.1.1").status_code == 302
    released = CrowdRecruit.objects.exclude(released_at=None)
    assert released.count() == 5 and set(released.values_list("release_reason", flat=True)) == {"idle"}


def test_a_recruit_at_work_keeps_their_place(stage):
    link = make_link(stage, max_recruits=1, reservation_minutes=30)
    worker = Client()
    start(worker, link, "worker")
    recruit = CrowdRecruit.objects.get()
    CrowdRecruit.objects.update(last_seen_at=timezone.now() - timedelta(minutes=31))
    assert worker.get(f"/annotation/training/{stage.stage.pk}/").status_code == 200  # a page: seen again
    assert start(Client(), link, "late", address="10.5.0.1").status_code == 403
    recruit.refresh_from_db()
    assert recruit.released_at is None


def test_a_returned_recruits_items_come_back_and_they_may_come_back_while_a_place_is_free(stage):
    link = make_link(stage, max_recruits=1)
    browser = Client()
    start(browser, link, "leaver")
    recruit = CrowdRecruit.objects.get()
    pass_gate(recruit, stage)
    held = label_next(annotator=recruit.user, stage=stage.stage)
    assert MainItem.objects.get(stage=stage.stage, item=held.item).slots_taken == 1
    asked = browser.get("/annotation/crowd/return/")
    assert asked.status_code == 200 and "data-crowd-return-button" in asked.content.decode()
    returned = browser.post("/annotation/crowd/return/")
    assert returned.status_code == 200 and "You have returned the study" in returned.content.decode()
    assert signed_in_username(browser) is None
    assert not Assignment.objects.filter(annotator=recruit.user, submitted_at=None).exists()
    assert MainItem.objects.get(stage=stage.stage, item=held.item).slots_taken == 0
    recruit.refresh_from_db()
    assert recruit.release_reason == "returned"
    # The researcher's outcome list says so, to act on the platform (a returned submission).
    [row] = crowd_outcome_rows(stage.stage)
    assert (row["pseudonym"], row["status"]) == (recruit.user.username, "returned")

    # The place is free for a real arrival, who is handed the item that came back.
    newcomer = Client()
    assert start(newcomer, link, "newcomer", address="10.6.0.2").status_code == 302
    other = CrowdRecruit.objects.get(user__username=signed_in_username(newcomer))
    pass_gate(other, stage)
    assert label_next(annotator=other.user, stage=stage.stage).item == held.item
    # The one who returned may come back only while a place is free: not now.
    again = start(Client(), link, "leaver")
    assert again.status_code == 403 and "places are all taken" in again.content.decode()
    newcomer.post("/annotation/crowd/return/")
    assert start(Client(), link, "leaver").status_code == 302
    recruit.refresh_from_db()
    assert recruit.released_at is None


def test_an_idle_recruit_with_a_session_is_signed_out_when_the_place_went_to_someone_else(stage):
    link = make_link(stage, max_recruits=1, reservation_minutes=30)
    idle = Client()
    start(idle, link, "idle")
    recruit = CrowdRecruit.objects.get()
    pass_gate(recruit, stage)
    item = label_next(annotator=recruit.user, stage=stage.stage).item
    CrowdRecruit.objects.update(last_seen_at=timezone.now() - timedelta(minutes=31))
    Assignment.objects.update(reserved_until=timezone.now() - timedelta(minutes=1))
    assert start(Client(), link, "arrival", address="10.7.0.2").status_code == 302
    assert not Assignment.objects.filter(annotator=recruit.user).exists()  # the reserved item went back
    assert MainItem.objects.get(stage=stage.stage, item=item).slots_taken == 0
    back = idle.get(f"/annotation/label/{stage.stage.pk}/")
    assert back.status_code == 403 and "places are all taken" in back.content.decode()
    assert signed_in_username(idle) is None


# --- Possible duplicates ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("strategy", ["order", "random", "balanced"])
def test_two_ids_from_one_browser_never_fill_two_slots_of_one_item(stage, researcher, strategy):
    stage_labelling_configure(stage=stage.stage, strategy=strategy)
    link = make_link(stage, items_per_recruit=4)
    browser = Client()
    assert start(browser, link, "first-id").status_code == 302
    first = CrowdRecruit.objects.get()
    # The same browser, another id, another address: the entry cookie ties them together.
    assert (
        browser.post(url(link), {**ids("second-id"), "replace_session": "1"}, REMOTE_ADDR="10.8.0.2").status_code == 302
    )
    second = CrowdRecruit.objects.exclude(pk=first.pk).get()
    honest = Client()
    assert start(honest, link, "honest-id", address="10.8.0.3").status_code == 302
    third = CrowdRecruit.objects.exclude(pk__in=[first.pk, second.pk]).get()
    for recruit in (first, second, third):
        pass_gate(recruit, stage)

    def label_all(client) -> set:
        """Over the annotator API, as a recruit's browser or script would: next item, submit, until none is left."""
        api = f"/api/annotation/main/{stage.stage.pk}"
        given = {key: {"value": answer.value} for key, answer in answers(stage, "yes").items()}
        done = set()
        while (shown := client.get(f"{api}/next/")).status_code == 200:
            item = shown.json()["item"]["id"]
            sent = client.post(f"{api}/submit/", {"item": item, "answers": given}, content_type="application/json")
            assert sent.status_code == 201, sent.content
            done.add(item)
        # No item left (204), or the recruit's quota is met and the study says it is finished (403).
        assert shown.status_code == 204 or b"finished this study" in shown.content, shown.content
        return done

    first_browser = Client()  # the first id's own session (the shared browser now holds the second's)
    first_browser.force_login(first.user)
    by_first = label_all(first_browser)
    by_second = label_all(browser)
    assert len(by_first) == 4 and by_second == set()  # every item already had one of this person's labels
    assert len(label_all(honest)) == 4  # an independent recruit fills the second slots

    client = Client()
    client.force_login(researcher)
    rows = client.get(f"/api/annotation/people/stages/{stage.stage.pk}/crowd/recruits/").json()
    flagged = {row["pseudonym"]: row["possible_duplicate_of"] for row in rows}
    assert flagged == {
        first.user.username: [second.user.username],
        second.user.username: [first.user.username],
        third.user.username: [],
    }
    page = client.get(f"/annotation/people/stages/{stage.stage.pk}/").content.decode()
    assert f"<td data-possible-duplicate>{first.user.username}</td>" in page


def test_two_ids_from_one_address_are_flagged_and_kept_apart(stage):
    link = make_link(stage, items_per_recruit=4)
    start(Client(), link, "home-a", address="192.0.2.7")
    start(Client(), link, "home-b", address="192.0.2.7")
    a, b = CrowdRecruit.objects.order_by("pk")
    for recruit in (a, b):
        pass_gate(recruit, stage)
    mine = label_next(annotator=a.user, stage=stage.stage)
    theirs = label_next(annotator=b.user, stage=stage.stage)
    assert mine.item_id != theirs.item_id  # the reservation already counts as this person's slot


def test_the_admin_sets_the_same_rule(stage, researcher):
    client = Client()
    client.force_login(researcher)
    form = {
        "stage": stage.stage.pk,
        "is_open": "on",
        "max_recruits": "3",
        "items_per_recruit": "2",
        "participant_param": "PROLIFIC_PID",
        "study_param": "STUDY_ID",
        "session_param": "SESSION_ID",
        "completion_code": "DONE1",
        "screened_out_code": "OUT1",
        "not_consented_code": "NOPE1",
        "signature_param": "sig",
        "reservation_minutes": "20",
    }
    add = "/admin/annotation/crowdlink/add/"
    refused = client.post(add, {**form, "approved_only": "on"})
    assert refused.status_code == 200 and "Upload the approved participant ids" in refused.content.decode()
    assert not CrowdApprovedParticipant.objects.exists() and not hasattr(stage.stage, "crowd_link")
    assert client.post(add, {**form, "signature_required": "on"}).status_code == 302
    link = stage.stage.__class__.objects.get(pk=stage.stage.pk).crowd_link
    assert link.signature_required and len(link.entry_secret) == 64 and link.reservation_minutes == 20
    change = f"/admin/annotation/crowdlink/{link.pk}/change/"
    page = client.get(change).content.decode()
    assert "arrivals signed with this link" in page
    both = {**form, "signature_required": "on", "approved_only": "on", "approved_participants": "x1\nx2\n"}
    listed = client.post(change, both)
    assert listed.status_code == 302
    assert CrowdApprovedParticipant.objects.filter(link=link).count() == 2
    assert start(Client(), link, "x1").status_code == 403  # listed but unsigned


def test_a_released_recruit_with_a_session_goes_on_while_a_place_is_free(stage):
    link = make_link(stage, max_recruits=2, reservation_minutes=30)
    away = Client()
    start(away, link, "away")
    CrowdRecruit.objects.update(last_seen_at=timezone.now() - timedelta(minutes=31))
    assert start(Client(), link, "arrival", address="10.7.1.2").status_code == 302
    recruit = CrowdRecruit.objects.get(release_reason="idle")
    assert away.get(f"/annotation/training/{stage.stage.pk}/").status_code == 200  # a place is free: taken back
    recruit.refresh_from_db()
    assert recruit.released_at is None and recruit.release_reason == ""


def test_a_recruit_who_does_not_consent_gives_their_items_back(stage):
    link = make_link(stage, max_recruits=1)
    browser = Client()
    start(browser, link, "refuser")
    recruit = CrowdRecruit.objects.get()
    pass_gate(recruit, stage)
    held = label_next(annotator=recruit.user, stage=stage.stage)
    assert MainItem.objects.get(stage=stage.stage, item=held.item).slots_taken == 1
    left = browser.post(f"/annotation/crowd/{link.key}/leave/")
    assert left.status_code == 302
    recruit.refresh_from_db()
    assert recruit.outcome == CrowdRecruit.Outcome.NOT_CONSENTED
    assert not Assignment.objects.filter(annotator=recruit.user, submitted_at=None).exists()
    assert MainItem.objects.get(stage=stage.stage, item=held.item).slots_taken == 0
    # Not consenting holds no place: a real arrival gets in.
    assert start(Client(), link, "next-one", address="10.6.0.3").status_code == 302
