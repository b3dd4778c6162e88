"""Crowd arrivals see time, pay and quota first: the researcher sets them on the link (page and API, one list of
fields, checked alike), the start page shows them before "Start the study", and the first training page again."""

from decimal import Decimal

import pytest
from django.test import Client

from annotation.services.crowd import crowd_link_configure
from annotation.services.enrollment import enrollment_create
from annotation.services.training import SetupError

from .main_setup import build_main_stage
from .test_crowd_link import PID, crowd, enter  # noqa: F401  (crowd is a fixture)

pytestmark = pytest.mark.django_db

TERMS = {"estimated_minutes": 25, "pay_amount": "3.75", "pay_currency": "gbp"}


def _terms_block(html: str) -> str:
    start = html.index("data-crowd-terms")
    return html[start : html.index("</section>", start)]


def test_the_start_page_then_the_first_training_page_state_time_pay_and_quota(crowd):  # noqa: F811
    crowd_link_configure(stage=crowd.stage, values=TERMS)
    client = Client()
    start = client.get(f"/annotation/crowd/{crowd.link.key}/", {"PROLIFIC_PID": PID}).content.decode()
    block = _terms_block(start)
    assert "about 25 minutes" in block and "3.75 GBP" in block and "2 items to label" in block
    assert start.index("data-crowd-terms") < start.index("data-crowd-start-button")
    landed = enter(client, crowd.link)
    training = client.get(landed["Location"]).content.decode()
    assert "about 25 minutes" in _terms_block(training) and "3.75 GBP" in _terms_block(training)


def test_unset_terms_say_so_and_other_annotators_see_no_terms(crowd, annotator):  # noqa: F811
    client = Client()
    block = _terms_block(client.get(f"/annotation/crowd/{crowd.link.key}/", {"PROLIFIC_PID": PID}).content.decode())
    assert "Time: not stated" in block and "Pay: not stated" in block and "2 items" in block
    enter(client, crowd.link)
    assert "data-crowd-terms" in client.get(f"/annotation/training/{crowd.stage.pk}/").content.decode()
    enrollment_create(stage=crowd.stage, user=annotator, subject="maths")
    other = Client()
    other.force_login(annotator)
    assert "data-crowd-terms" not in other.get(f"/annotation/training/{crowd.stage.pk}/").content.decode()


def test_the_api_takes_and_returns_the_terms(researcher):
    s = build_main_stage(items=2, overlap=2)
    client = Client()
    client.force_login(researcher)
    url = f"/api/annotation/people/stages/{s.stage.pk}/crowd/"
    body = client.put(url, {**TERMS, "pay_amount": 3.75}, content_type="application/json").json()
    assert (body["estimated_minutes"], body["pay_amount"], body["pay_currency"]) == (25, "3.75", "GBP")
    cleared = client.put(url, {"estimated_minutes": None, "pay_amount": None}, content_type="application/json")
    assert (cleared.json()["estimated_minutes"], cleared.json()["pay_amount"]) == (None, None)


@pytest.mark.parametrize(
    "bad, field",
    [
        ({"estimated_minutes": 0}, "estimated_minutes"),
        ({"estimated_minutes": "ten"}, "estimated_minutes"),
        ({"estimated_minutes": True}, "estimated_minutes"),
        ({"pay_amount": -1}, "pay_amount"),
        ({"pay_amount": "1.234"}, "pay_amount"),
        ({"pay_amount": "lots"}, "pay_amount"),
        ({"pay_amount": "NaN"}, "pay_amount"),
        ({"pay_amount": False}, "pay_amount"),
        ({"pay_currency": "pounds"}, "pay_currency"),
        ({"pay_currency": 826}, "pay_currency"),
    ],
)
def test_bad_terms_are_refused_naming_the_field(researcher, bad, field):
    s = build_main_stage(items=2, overlap=2)
    with pytest.raises(SetupError, match=field):
        crowd_link_configure(stage=s.stage, values=bad)
    client = Client()
    client.force_login(researcher)
    response = client.put(f"/api/annotation/people/stages/{s.stage.pk}/crowd/", bad, content_type="application/json")
    assert response.status_code == 400 and field in response.json()["detail"]


def test_the_page_form_takes_the_terms_and_refuses_bad_ones(researcher):
    s = build_main_stage(items=2, overlap=2)
    client = Client()
    client.force_login(researcher)
    form = {
        "is_open": "on",
        "max_recruits": "3",
        "items_per_recruit": "4",
        "estimated_minutes": "40",
        "pay_amount": "6.50",
        "pay_currency": "usd",
        "participant_param": "PROLIFIC_PID",
        "study_param": "STUDY_ID",
        "session_param": "SESSION_ID",
        "completion_code": "DONE1",
        "screened_out_code": "OUT1",
        "not_consented_code": "NOPE1",
    }
    url = f"/annotation/people/stages/{s.stage.pk}/crowd/"
    assert client.post(url, form).status_code == 302
    link = s.stage.crowd_link
    assert (link.estimated_minutes, link.pay_amount, link.pay_currency) == (40, Decimal("6.50"), "USD")
    assert link.arrival_terms() == {"minutes": 40, "pay": "6.50 USD", "quota": 4}
    for bad in ({"estimated_minutes": "0"}, {"pay_amount": "-2"}, {"pay_currency": "dollars"}):
        assert client.post(url, {**form, **bad}).status_code == 400
    page = client.get(f"/annotation/people/stages/{s.stage.pk}/").content.decode()
    assert 'name="estimated_minutes"' in page and 'name="pay_amount"' in page and 'name="pay_currency"' in page
