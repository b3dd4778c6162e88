"""In the browser: a researcher uploads a SocraTeach file on the question bank page and sees its funnel."""

import pytest

from audits.tests.questionbank_files import SAMPLES
from conftest import browser_login


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_researcher_uploads_a_file_and_sees_its_funnel(page, make_user):
    make_user("researcher", username="ada")
    browser_login(page, "ada")
    page.locator(".nav-menu summary", has_text="Audits").click()  # the researcher's menus in the nav
    page.click("text=Question bank")
    page.wait_for_url("**/audits/questionbank/")
    assert "The bank is empty" in page.inner_text("#domain-counts")

    page.select_option("#id_source", "socrateach")
    assert page.is_visible("text=SocraTeach filter rules")
    assert not page.is_visible("text=SciQ domain classifier and sampling")
    page.set_input_files("#id_file", str(SAMPLES / "socrateach_multi_sample.json"))
    page.click("#upload-submit")

    page.wait_for_url("**/audits/questionbank/imports/*/")
    assert "5 new question(s)" in page.inner_text(".messages")
    funnel = page.locator("table.funnel")
    assert funnel.locator('td[data-step="dialogues in"]').inner_text() == "14"
    assert funnel.locator('td[data-step="≥ 4 exchanges"]').inner_text() == "11"
    assert funnel.locator('td[data-step="no ground-truth disclosure"]').inner_text() == "6"

    page.click("text=Show this import's questions")
    page.click("text=Solve for x: 3x + 7 = 25.")
    assert "Subtract 7, so 3x = 18." in page.inner_text("#reference-dialogue")
